// Playwright's observe (goto to DOMContentLoaded + body innerText + PNG screenshot) on the
// pages the browser bench serves, 30 times each, and a cold launch, 5 times — printed in the
// bench's own format. Usage: node run.mjs <base-url> <chromium-path>
import { chromium } from "playwright-core";

const [base, executablePath] = process.argv.slice(2);
const pages = ["/article.html", "/prices.html", "/form.html"];
const args = process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : [];
const ms = (t) => Number(t) / 1e6;
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const tail = s.length >= 20 ? `p95 ${s[Math.floor(s.length * 0.95)].toFixed(1)}` : `max ${s[s.length - 1].toFixed(1)}`;
  return `p50 ${s[Math.floor(s.length / 2)].toFixed(1)} ms, ${tail} ms`;
};

const launches = [];
for (let i = 0; i < 5; i++) {
  const t = process.hrtime.bigint();
  const browser = await chromium.launch({ executablePath, headless: true, args });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  launches.push(ms(process.hrtime.bigint() - t));
  await page.close();
  await browser.close();
}
console.log(`playwright cold launch (to a ready page), 5 runs: ${stats(launches)}`);

const browser = await chromium.launch({ executablePath, headless: true, args });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
// Twice per page: Playwright's own screenshot (its default PNG encoder), and the same look with
// the screenshot taken the way Hearth takes it (CDP Page.captureScreenshot, optimizeForSpeed),
// so the stacks are compared with the encoder held equal.
const cdp = await page.context().newCDPSession(page);
for (const [label, shoot] of [
  ["", async () => (await page.screenshot({ type: "png" })).length],
  [" (fast encoder)", async () => Buffer.from((await cdp.send("Page.captureScreenshot", { format: "png", optimizeForSpeed: true })).data, "base64").length],
]) {
  for (const path of pages) {
    const times = [];
    let bytes = 0;
    for (let i = 0; i < 33; i++) {
      const t = process.hrtime.bigint();
      await page.goto(base + path, { waitUntil: "domcontentloaded" });
      const text = await page.innerText("body");
      bytes = await shoot();
      if (i >= 3) times.push(ms(process.hrtime.bigint() - t));
      if (!text.length) throw new Error("no text");
    }
    console.log(`playwright observe${label} ${path}, 30 runs: ${stats(times)}, screenshot ${bytes} bytes`);
  }
}
await browser.close();
