// The browser test of the web page: Debian's chromium, headless, driven by playwright-core.
//   node tests/web/browser_test.mjs URL EXPECTED_REQUIRED_BYTES SCREENSHOT CONFIG EXPECTED_CONFIG_BYTES EXPECTED_INFER_BYTES
// Opens the page served at URL, fills the form (Llama-2-7B, amp-bf16, AdamW, batch 4, seq 2048,
// LoRA 16, RTX 4090 + A100 80GB), runs it, and checks the page's required bytes against the
// native binary's `estimate --format json` (EXPECTED_REQUIRED_BYTES), the bar and the plot, and
// that the permalink brings the same result back. Saves a screenshot. Then uploads CONFIG (a
// config.json) and checks the page against the native `--config CONFIG` run. Last, switches the first
// form to inference: the page must drop amp-bf16 for the checkpoint's dtype (EXPECTED_INFER_BYTES).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const [url, expected, screenshot, config, expectedConfig, expectedInfer] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "memplan-chromium-"));
// A fresh profile (--user-data-dir, which playwright sets from the persistent context's folder).
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1100, height: 1200 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = false;
const check = (ok, what) => {
  console.log(`${ok ? "ok" : "FAILED"}: ${what}`);
  failed = failed || !ok;
};
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => check(false, `no error on the page (${e})`));
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']", { timeout: 60000 });
  await page.selectOption("#model", "llama-2-7b");
  await page.selectOption("#mode", "train");
  await page.selectOption("#precision", "amp-bf16");
  await page.selectOption("#optimizer", "adamw");
  await page.fill("#batch", "4");
  await page.fill("#seq", "2048");
  await page.fill("#lora", "16");
  await page.fill("#gpu", "rtx-4090,a100-80gb");
  await page.click("#go");
  await page.waitForFunction(() => document.querySelector("#command").textContent.includes("--lora 16"));
  const bytes = (await page.textContent("#required-bytes")).trim();
  check(bytes === expected, `required bytes on the page ${bytes} = native --format json ${expected}`);
  const table = await page.textContent("#result");
  check(table.includes("a100-80gb [") && table.includes("rtx-4090  ["), "a bar per GPU");
  const gib = (Number(expected) / 2 ** 30).toFixed(1) + " GiB";
  check(table.includes(`] ${gib} of `), `the bar says ${gib}`);
  check((await page.locator("#plot svg").count()) === 1, "the plot is drawn");
  const link = await page.getAttribute("#permalink", "href");
  check(link.includes("lora=16") && link.includes("precision=amp-bf16"), `permalink ${link}`);
  await page.screenshot({ path: screenshot, fullPage: true });
  const again = await browser.newPage();
  await again.goto(new URL(link, url).toString());
  await again.waitForSelector("body[data-ready='1']", { timeout: 60000 });
  check((await again.textContent("#required-bytes")).trim() === expected, "the permalink gives the same bytes");
  await again.setInputFiles("#config", config);
  await again.waitForFunction(() => document.querySelector("#config-name").textContent !== "");
  await again.click("#go");
  await again.waitForFunction(() => document.querySelector("#command").textContent.includes("--config"));
  const configBytes = (await again.textContent("#required-bytes")).trim();
  check(configBytes === expectedConfig, `${path.basename(config)} uploaded: ${configBytes} = native ${expectedConfig}`);
  const configLink = await again.getAttribute("#permalink", "href");
  const third = await browser.newPage();
  await third.goto(new URL(configLink, url).toString());
  await third.waitForSelector("body[data-ready='1']", { timeout: 60000 });
  check((await third.textContent("#required-bytes")).trim() === expectedConfig,
        "the permalink carries the uploaded config.json");
  await page.fill("#lora", "0");
  await page.selectOption("#mode", "infer");
  check((await page.inputValue("#precision")) === "", "switched to inference, the precision is the checkpoint's");
  await page.click("#go");
  await page.waitForFunction(() => document.querySelector("#command").textContent.includes("--mode infer"));
  const inferBytes = (await page.textContent("#required-bytes")).trim();
  check(inferBytes === expectedInfer, `inference: ${inferBytes} = native ${expectedInfer}`);
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
