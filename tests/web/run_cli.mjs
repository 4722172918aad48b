// Runs the WebAssembly memplan under node through the page's entry point (memplan_run_json):
//   node --no-experimental-fetch tests/web/run_cli.mjs build-web/memplan.js ARGS...
// prints its stdout and stderr and exits with its exit code, like the native binary.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const [modulePath, ...args] = process.argv.slice(2);
const createMemplan = require(path.resolve(modulePath));
const memplan = await createMemplan({ print: () => {}, printErr: () => {} });
const r = JSON.parse(memplan.ccall("memplan_run_json", "string", ["string"], [JSON.stringify(args)]));
process.stdout.write(r.out);
process.stderr.write(r.err);
process.exitCode = r.code;
