// The page: a form that becomes a memplan command line, run by the WebAssembly CLI in this page.
"use strict";

const fields = ["model", "mode", "precision", "optimizer", "batch", "seq", "lora", "gpu"];
const $ = (id) => document.getElementById(id);
let memplan = null;        // the emscripten module
let configText = null;     // an uploaded config.json
let configName = "";

// Runs `memplan ARGS` in-process: {code, out, err}.
function cli(args) {
  return JSON.parse(memplan.ccall("memplan_run_json", "string", ["string"], [JSON.stringify(args)]));
}

// base64url of UTF-8 text, and back (the permalink carries an uploaded config.json).
const toB64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64 = (s) => new TextDecoder().decode(Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)));

// The planning flags of the form, shared by every command the page runs.
function planArgs() {
  const args = [];
  if (configText !== null) {
    memplan.FS.writeFile("/config.json", configText);
    args.push("--config", "/config.json");
  } else {
    args.push("--model", $("model").value);
  }
  const mode = $("mode").value;
  args.push("--mode", mode);
  // "checkpoint dtype" (the default) passes no --precision: memplan takes the checkpoint's torch_dtype,
  // for training and inference alike, as the command line does.
  if ($("precision").value !== "") args.push("--precision", $("precision").value);
  if (mode === "train") args.push("--optimizer", $("optimizer").value);
  args.push("--batch", $("batch").value, "--seq", $("seq").value);
  const lora = $("lora").value.trim();
  if (mode === "train" && lora !== "" && lora !== "0") args.push("--lora", lora);
  if ($("gpu").value.trim() !== "") args.push("--gpu", $("gpu").value.trim());
  return args;
}

function permalink() {
  const q = new URLSearchParams();
  for (const f of fields) q.set(f, $(f).value);
  if (configText !== null) {
    q.delete("model");
    q.set("config", toB64(configText));
    q.set("config_name", configName);
  }
  return location.pathname + "?" + q.toString();
}

function show() {
  const args = planArgs();
  $("command").textContent = "memplan estimate " + args.join(" ") + " --bar --width 100";
  const table = cli(["estimate", ...args, "--bar", "--width", "100"]);
  const json = cli(["estimate", ...args, "--format", "json"]);
  $("status").textContent = "";
  $("status").className = "";
  if (table.code !== 0 || json.code !== 0) {
    $("status").textContent = table.err || json.err;
    $("status").className = "error";
    $("result").textContent = "";
    $("required").textContent = "";
    $("required-bytes").textContent = "";
    $("plot").innerHTML = "";
    return;
  }
  const doc = JSON.parse(json.out);
  $("result").textContent = table.out;
  $("required-bytes").textContent = String(doc.required_bytes);
  $("required").textContent = (doc.required_bytes / 2 ** 30).toFixed(1) + " GiB";
  const plot = cli(["plot", ...args, "--vs", "batch"]);
  $("plot").innerHTML = plot.code === 0 ? plot.out : "";
  const link = permalink();
  $("permalink").href = link;
  history.replaceState(null, "", link);
}

function fillFromQuery() {
  const q = new URLSearchParams(location.search);
  for (const f of fields) if (q.has(f)) $(f).value = q.get(f);
  if (q.has("config")) {
    configText = fromB64(q.get("config"));
    configName = q.get("config_name") || "config.json";
    $("config-name").textContent = configName;
  }
}

async function main() {
  memplan = await createMemplan();
  const models = JSON.parse(cli(["models", "--format", "json"]).out).models;
  for (const m of models) {
    const o = document.createElement("option");
    o.value = m.id;
    o.textContent = m.name + " (" + m.id + ")";
    $("model").appendChild(o);
  }
  $("model").value = "llama-2-7b";
  fillFromQuery();
  $("config").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    configText = file ? await file.text() : null;
    configName = file ? file.name : "";
    $("config-name").textContent = configName;
  });
  $("model").addEventListener("change", () => { configText = null; $("config-name").textContent = ""; });
  // Autocast and master-weight recipes are training recipes: switched to inference, the page goes back to
  // the checkpoint's dtype (what vLLM and transformers load), as the command line does without --precision.
  $("mode").addEventListener("change", () => {
    const p = $("precision").value;
    if ($("mode").value === "infer" && (p.startsWith("amp-") || p.startsWith("mixed-"))) $("precision").value = "";
  });
  $("form").addEventListener("submit", (ev) => { ev.preventDefault(); show(); });
  show();
  document.body.dataset.ready = "1";
}

main().catch((e) => { $("status").textContent = "memplan could not start: " + e; $("status").className = "error"; });
