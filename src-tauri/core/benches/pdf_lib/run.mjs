// pdf-lib 1.17.1 on the bytes the pdf_inspect bench uses (../data), 10 warm-up runs then 200
// timed ones of: inspect (load + list fields with values) and load → fill → save.
// Prints median and p95 in the same words as the Rust bench.
import { readFileSync } from "node:fs";
import { PDFDocument, PDFCheckBox, PDFTextField } from "pdf-lib";

const RUNS = 200;
const here = new URL("../data/", import.meta.url);
const form = readFileSync(new URL("permission-form.pdf", here));
const values = JSON.parse(readFileSync(new URL("permission-form.fill.json", here), "utf8"));

async function inspect() {
  const doc = await PDFDocument.load(form, { updateMetadata: false });
  const fields = doc.getForm().getFields().map((f) => {
    const name = f.getName();
    if (f instanceof PDFTextField) return [name, f.getText()];
    if (f instanceof PDFCheckBox) return [name, f.isChecked()];
    return [name, null];
  });
  if (fields.length !== 6) throw new Error(`expected 6 fields, got ${fields.length}`);
}

async function fill() {
  const doc = await PDFDocument.load(form, { updateMetadata: false });
  const f = doc.getForm();
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "boolean") {
      const box = f.getCheckBox(name);
      value ? box.check() : box.uncheck();
    } else {
      f.getTextField(name).setText(value);
    }
  }
  const out = await doc.save();
  if (out.length < form.length / 2) throw new Error("short output");
}

async function measure(what, run) {
  for (let i = 0; i < 10; i++) await run();
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`pdf-lib ${what}, ${RUNS} runs: median ${times[RUNS / 2].toFixed(3)}ms, p95 ${times[(RUNS * 95) / 100].toFixed(3)}ms`);
}

await measure("inspect (load + 6 fields with values)", inspect);
await measure("fill (load + fill 6 fields + save)", fill);
