// The node half of scripts/bench/similarity.
//   node fuzzball_bench.mjs generate CORPUS       write the shared corpus (deterministic)
//   node fuzzball_bench.mjs measure CORPUS REPS   time fuzzball on it; JSON medians on stdout
//   node fuzzball_bench.mjs report OURS.json FUZZBALL.json   print the comparison table
// The corpus is JSON Lines {"case", "length", "a", "b"}: for each length, near-duplicate pairs
// (about 3% of the characters edited), unrelated pairs, and near duplicates with multi-byte text.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";

const LENGTHS = [64, 256, 1024, 4096];
const PAIRS_PER_LENGTH = { 64: 32, 256: 32, 1024: 8, 4096: 4 };
const SEED = 20261122;
const OPTIONS = { full_process: false, astral: true, normalize: false };
const MIN_PASS_NS = 20e6; // one timed pass runs at least this long

function rng(seed) { // mulberry32
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(path) {
  const rand = rng(SEED);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const ascii = ("let me check the database for user information query result error retry file " +
    "read write test passed failed agent tool call output search found nothing again loop step " +
    "plan fix patch build compile warning line function value null undefined status 200 ok " +
    "src/main.cpp:42 TypeError: cannot read property of").split(" ");
  const multibyte = ascii.concat("café données naïve привет мир 数据库 用户 查询 🚀 😀 ✅".split(" "));
  const text = (words, length) => {
    const out = [];
    while (out.length < length) out.push(...Array.from(pick(words)), " ");
    return out.slice(0, length);
  };
  const mutate = (chars, words) => {
    const a = chars.slice();
    const pool = Array.from(words.join(""));
    const edits = Math.max(1, Math.round(a.length * 0.03));
    for (let e = 0; e < edits; ++e) {
      const i = Math.floor(rand() * a.length);
      const op = Math.floor(rand() * 3);
      if (op === 0) a.splice(i, 0, pick(pool));
      else if (op === 1) a.splice(i, 1);
      else a[i] = pick(pool);
    }
    return a;
  };
  const lines = [];
  for (const length of LENGTHS) {
    for (let k = 0; k < PAIRS_PER_LENGTH[length]; ++k) {
      const near = text(ascii, length);
      lines.push({ case: "near", length, a: near.join(""), b: mutate(near, ascii).join("") });
      lines.push({ case: "unrelated", length, a: text(ascii, length).join(""),
        b: text(ascii, length).join("") });
      const wide = text(multibyte, length);
      lines.push({ case: "near_multibyte", length, a: wide.join(""),
        b: mutate(wide, multibyte).join("") });
    }
  }
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

function median(xs) {
  const s = xs.slice().sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// fuzzball has neither a cutoff nor a cached form: those rows time the plain call.
const SCORERS = {
  ratio: ["ratio", ["near", "unrelated", "near_multibyte"]],
  ratio_cutoff90: ["ratio", ["unrelated"]],
  cached_ratio: ["ratio", ["near", "unrelated"]],
  partial_ratio: ["partial_ratio", ["near", "unrelated"]],
  token_sort_ratio: ["token_sort_ratio", ["near", "unrelated"]],
  token_set_ratio: ["token_set_ratio", ["near", "unrelated"]],
};

function measure(path, reps) {
  const fuzz = createRequire(import.meta.url)("fuzzball");
  const corpus = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const results = {};
  const cache = new Map(); // the same fuzzball call is timed once
  for (const [name, [fn, cases]] of Object.entries(SCORERS)) {
    for (const kase of cases) {
      for (const length of LENGTHS) {
        const key = `${fn}/${kase}/${length}`;
        if (!cache.has(key)) {
          const pairs = corpus.filter((p) => p.case === kase && p.length === length);
          const f = fuzz[fn];
          let sink = 0;
          const pass = () => {
            const start = process.hrtime.bigint();
            for (const p of pairs) sink += f(p.a, p.b, OPTIONS);
            return Number(process.hrtime.bigint() - start);
          };
          // Warm up (JIT), then size a pass to MIN_PASS_NS.
          const once = pass();
          const rounds = Math.max(1, Math.ceil(MIN_PASS_NS / Math.max(once, 1)));
          const samples = [];
          for (let r = 0; r < reps; ++r) {
            let ns = 0;
            for (let k = 0; k < rounds; ++k) ns += pass();
            samples.push(ns / (rounds * pairs.length));
          }
          if (sink < 0) console.error(sink);
          cache.set(key, median(samples));
        }
        results[`${name}/${kase}/${length}`] = cache.get(key);
      }
    }
  }
  process.stdout.write(JSON.stringify(results) + "\n");
}

function report(oursPath, fuzzballPath) {
  const fb = JSON.parse(readFileSync(fuzzballPath, "utf8"));
  const ours = {};
  for (const b of JSON.parse(readFileSync(oursPath, "utf8")).benchmarks) {
    if (b.aggregate_name !== "median") continue;
    const scale = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[b.time_unit];
    ours[b.run_name] = b.real_time * scale;
  }
  const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3
    ? `${(ns / 1e3).toFixed(2)} us` : `${ns.toFixed(0)} ns`);
  const rows = [["scorer", "case", "length", "ours (median/cmp)", "fuzzball (median/cmp)",
    "fuzzball/ours"]];
  for (const key of Object.keys(fb)) {
    const [scorer, kase, length] = key.split("/");
    const o = ours[key];
    if (o === undefined) continue;
    rows.push([scorer, kase, length, fmt(o), fmt(fb[key]), `${(fb[key] / o).toFixed(0)}x`]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r) => "| " + r.map((x, c) => x.padEnd(widths[c])).join(" | ") + " |";
  console.log(line(rows[0]));
  console.log("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows.slice(1)) console.log(line(r));
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "generate") generate(args[0]);
else if (mode === "measure") measure(args[0], Number(args[1] ?? 5));
else if (mode === "report") report(args[0], args[1]);
else {
  console.error("usage: fuzzball_bench.mjs generate CORPUS | measure CORPUS REPS | report OURS FB");
  process.exit(2);
}
