// Generates tests/data/similarity/golden.jsonl: pairs of strings with the scores the C++ suite
// must reproduce. Run once (the output is committed; the test suite needs no node):
//
//   cd scripts/gen && npm ci && node similarity_golden.mjs > ../../tests/data/similarity/golden.jsonl
//
// Deterministic: a fixed seed, no clock, no Math.random. Each line holds
//   a, b            the pair (UTF-8 in the file; code points are what is compared)
//   kind            how the pair was made
//   len_a, len_b    lengths in code points
//   lcs             LCS(a, b) by plain O(nm) dynamic programming           -> exact ratio
//   sort_lcs, sort_len  the same for the token-sorted forms (LCS, |x| + |y|) -> exact token_sort
//   token_set       token_set_ratio from fuzzball's construction, every ratio by plain DP (exact)
//   partial         partial_ratio by brute force over every window (null when too costly)
//   fb_ratio, fb_token_sort, fb_token_set  fuzzball's own integer scores, with
//                   {full_process: false, astral: true, normalize: false}; null where fuzzball
//                   throws (token_sort_ratio on a whitespace-only string).
import { createRequire } from "node:module";
const fuzz = createRequire(import.meta.url)("fuzzball");

const SEED = 20261122;
const PAIR_COUNT = 1200;
const PARTIAL_BUDGET = 3e8; // DP cells allowed for one pair's brute-force partial_ratio
const FB_OPTIONS = { full_process: false, astral: true, normalize: false };

// mulberry32: small, well-known, deterministic.
function rng(seed) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(SEED);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const range = (lo, hi) => Array.from({ length: hi - lo + 1 }, (_, i) => String.fromCodePoint(lo + i));
const ALPHABETS = {
  abc: ["a", "b", "c"],
  ascii: range(0x20, 0x7e),
  latin_greek_cyrillic: [...range(0xc0, 0xff), ...range(0x391, 0x3c9), ...range(0x410, 0x44f), " "],
  cjk: [...range(0x4e00, 0x4e3f), "\u3000"],
  emoji: [...range(0x1f600, 0x1f64f), ...range(0x1f300, 0x1f30f), " "],
  // Code points whose UTF-16 order differs from their code point order (U+E000..U+FFFF sort
  // after surrogate pairs in JavaScript), plus unusual whitespace that JavaScript's \s splits on.
  mixed: ["a", "b", "Z", "é", "ß", "Ω", "Я", "中", "\uff21", "\ue000", "\ufffd", "😀", "🚀",
    "\u{10000}", "\u{1f9ea}", " ", " ", "\t", "\u00a0", "\u2003", "\u3000", "\n"],
};
const WORDS = ("the database user information query check let me for and result error retry " +
  "file read write test passed failed agent tool call output search found nothing again " +
  "loop step plan fix patch build compile warning line function value null undefined " +
  "привет мир données café 数据库 用户 查询 🚀 😀 émoji naïve Ωmega").split(" ");

function cps(s) { return Array.from(s); }

function random_string(alphabet, length) {
  if (alphabet === "words") {
    const out = [];
    let n = 0;
    while (n < length) {
      const w = cps(pick(WORDS));
      out.push(...w, " ");
      n += w.length + 1;
    }
    return out.slice(0, length).join("");
  }
  const chars = ALPHABETS[alphabet];
  let s = "";
  for (let i = 0; i < length; ++i) s += pick(chars);
  return s;
}

function mutate(s, alphabet, edits) {
  const chars = alphabet === "words" ? cps(WORDS.join(" ")) : ALPHABETS[alphabet];
  const a = cps(s);
  for (let e = 0; e < edits; ++e) {
    const op = int(0, 3);
    const i = int(0, a.length);
    if (op === 0 || a.length === 0) a.splice(i, 0, pick(chars));
    else if (op === 1) a.splice(Math.min(i, a.length - 1), 1);
    else if (op === 2) a[Math.min(i, a.length - 1)] = pick(chars);
    else { // move a short block
      const len = int(1, 8);
      const from = int(0, a.length - 1);
      const block = a.splice(from, len);
      a.splice(int(0, a.length), 0, ...block);
    }
  }
  return a.join("");
}

function shuffle_tokens(s) {
  const t = s.split(" ");
  for (let i = t.length - 1; i > 0; --i) {
    const j = int(0, i);
    [t[i], t[j]] = [t[j], t[i]];
  }
  return t.join(" ");
}

function random_length() {
  const r = rand();
  if (r < 0.55) return int(0, 100);
  if (r < 0.80) return int(100, 600);
  if (r < 0.93) return int(600, 1500);
  return int(1500, 4096);
}

// ---- independent reference implementations (plain dynamic programming) ----

function lcs(x, y) { // x, y: arrays of code points
  if (x.length === 0 || y.length === 0) return 0;
  let prev = new Int32Array(y.length + 1);
  let cur = new Int32Array(y.length + 1);
  for (let i = 1; i <= x.length; ++i) {
    const xi = x[i - 1];
    for (let j = 1; j <= y.length; ++j) {
      cur[j] = xi === y[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[y.length];
}

// ratio as fuzzball's _ratio guards it: an empty side scores 0.
function exact_ratio_nonempty(x, y) {
  const a = cps(x), b = cps(y);
  if (a.length === 0 || b.length === 0) return 0;
  return (200 * lcs(a, b)) / (a.length + b.length);
}

const tokens_of = (s) => s.match(/\S+/g) ?? [];
const sorted_join = (s) => tokens_of(s).sort().join(" ");

function exact_token_set(s1, s2) {
  const t1 = [...new Set(tokens_of(s1))];
  const t2 = [...new Set(tokens_of(s2))];
  if (t1.length === 0 || t2.length === 0) return 0;
  const sect = t1.filter((t) => t2.includes(t)).sort().join(" ");
  const d12 = t1.filter((t) => !t2.includes(t)).sort().join(" ");
  const d21 = t2.filter((t) => !t1.includes(t)).sort().join(" ");
  const c12 = (sect + " " + d12).trim();
  const c21 = (sect + " " + d21).trim();
  return Math.max(exact_ratio_nonempty(sect, c12), exact_ratio_nonempty(sect, c21),
    exact_ratio_nonempty(c12, c21));
}

// Every window of the longer string the shorter one can be laid over (prefixes shorter than the
// needle, all full-length windows, suffixes), each scored with plain-DP ratio; both ways round
// when the lengths are equal.
function partial_one_way(needle, hay) {
  const m = needle.length, n = hay.length;
  const windows = [];
  for (let i = 1; i < m; ++i) windows.push([0, i]);
  for (let i = 0; i + m <= n; ++i) windows.push([i, i + m]);
  for (let i = n - m + 1; i < n; ++i) windows.push([i, n]);
  let best = 0;
  for (const [s, e] of windows) {
    const w = hay.slice(s, e);
    best = Math.max(best, (200 * lcs(needle, w)) / (m + w.length));
  }
  return best;
}

function brute_partial(x, y) {
  const a = cps(x), b = cps(y);
  if (a.length === 0 && b.length === 0) return 100;
  if (a.length === 0 || b.length === 0) return 0;
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  const cost = (l.length + s.length) * s.length * s.length * (a.length === b.length ? 2 : 1);
  if (cost > PARTIAL_BUDGET) return null;
  let best = partial_one_way(s, l);
  if (a.length === b.length) best = Math.max(best, partial_one_way(l, s));
  return best;
}

function fuzzball_or_null(f, a, b) {
  try { return f(a, b, { ...FB_OPTIONS }); } catch { return null; }
}

// ---- the pairs ----

const ALPHABET_NAMES = ["words", "words", "words", "ascii", "abc", "latin_greek_cyrillic", "cjk",
  "emoji", "mixed"];
const FIXED = [
  ["", "", "empty"], ["", "abc", "empty"], ["abc", "", "empty"], ["   ", "a b", "whitespace"],
  ["\t\u3000", "x", "whitespace"], [" ", " ", "whitespace"],
  ["Hello world", "Hello world!", "hand"],
  ["Let me check the database for user information...",
    "Checking the database for user information...", "hand"],
  ["fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear", "hand"],
  ["😀🚀", "🚀😀", "hand"], ["\uff21 😀", "😀 \uff21", "hand"],
];
const BOUNDARY_LENGTHS = [1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 4095, 4096];

function make_pair(index) {
  const alphabet = pick(ALPHABET_NAMES);
  let la = index < BOUNDARY_LENGTHS.length * 2 ? BOUNDARY_LENGTHS[index % BOUNDARY_LENGTHS.length]
    : random_length();
  const r = rand();
  if (r < 0.45) {
    const a = random_string(alphabet, la);
    const edits = Math.max(1, Math.round(la * pick([0.005, 0.02, 0.05, 0.1, 0.3])));
    return [a, mutate(a, alphabet, edits), "near_duplicate/" + alphabet];
  }
  if (r < 0.70) {
    const lb = rand() < 0.5 ? la : random_length();
    return [random_string(alphabet, la), random_string(alphabet, lb), "unrelated/" + alphabet];
  }
  if (r < 0.85) { // a noisy piece of b inside b: what partial_ratio is for
    if (la < 8) la = int(8, 400);
    const b = random_string(alphabet, la);
    const len = int(1, Math.min(200, cps(b).length));
    const start = int(0, cps(b).length - len);
    const piece = cps(b).slice(start, start + len).join("");
    return [mutate(piece, alphabet, int(0, 3)), b, "substring/" + alphabet];
  }
  if (r < 0.95) {
    const a = random_string("words", Math.min(la, 800));
    return [a, mutate(shuffle_tokens(a), "words", int(0, 4)), "token_shuffle/words"];
  }
  const a = random_string(alphabet, la);
  return [a, a, "identical/" + alphabet];
}

const MAX_LENGTH = 4096; // code points; edits may grow a string past it
const cap = (s) => cps(s).slice(0, MAX_LENGTH).join("");
const pairs = FIXED.map(([a, b, kind]) => [a, b, kind]);
for (let i = 0; pairs.length < PAIR_COUNT; ++i) {
  const [a, b, kind] = make_pair(i);
  pairs.push([cap(a), cap(b), kind]);
}

for (const [a, b, kind] of pairs) {
  const ca = cps(a), cb = cps(b);
  const sa = cps(sorted_join(a)), sb = cps(sorted_join(b));
  const record = {
    kind, a, b,
    len_a: ca.length, len_b: cb.length,
    lcs: lcs(ca, cb),
    sort_lcs: lcs(sa, sb), sort_len: sa.length + sb.length,
    token_set: exact_token_set(a, b),
    partial: brute_partial(a, b),
    fb_ratio: fuzzball_or_null(fuzz.ratio, a, b),
    fb_token_sort: fuzzball_or_null(fuzz.token_sort_ratio, a, b),
    fb_token_set: fuzzball_or_null(fuzz.token_set_ratio, a, b),
  };
  process.stdout.write(JSON.stringify(record) + "\n");
}
