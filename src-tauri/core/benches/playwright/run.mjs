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
  return `p50 ${s[Math.floor(s.length / 2)].toFixed(1)} ms, p95 ${s[Math.floor(s.length * 0.95)].toFixed(1)} ms`;
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
for (const path of pages) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < 33; i++) {
    const t = process.hrtime.bigint();
    await page.goto(base + path, { waitUntil: "domcontentloaded" });
    const text = await page.innerText("body");
    const png = await page.screenshot({ type: "png" });
    if (i >= 3) times.push(ms(process.hrtime.bigint() - t));
    bytes = png.length;
    if (!text.length) throw new Error("no text");
  }
  console.log(`playwright observe ${path}, 30 runs: ${stats(times)}, screenshot ${bytes} bytes`);
}
await browser.close();
