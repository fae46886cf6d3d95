// kramabench view, static copy (kramabench view --bundle): the viewer's answers from the bundle's files, no server.
//
// A bundle holds the answers of the live viewer for its runs, computed when it was written
// (kramabench.view.bundle): each data file is a script that hands its answer to KB_DATA (a page opened from a
// plain folder, file://, may not fetch files; it may run the scripts beside it). What the live viewer computes
// per request is computed here from those answers: the task table's filter, search, sort and pages, previous /
// next, a comparison's filters. The score of what a filter keeps has its interval when the filter is one of the
// report's cells (one domain, one difficulty, precomputed); for another filter its mean alone, said.
"use strict";

(function () {
  const OUTCOMES = ["correct", "partial", "wrong", "error", "unscored"];
  const FACETS = {
    domain: (r) => r.domain, difficulty: (r) => r.difficulty, outcome: (r) => r.outcome, error: (r) => r.error_kind,
    type: (r) => r.answer_type, setting: (r) => r.setting, gold_class: (r) => r.gold_class, agent: (r) => r.agent_end,
  };
  const MULTI = { step: (r) => r.step_outcomes || [], benchmark: (r) => r.benchmark || [] };
  const NONE_FACETS = new Set(["error", "gold_class", "agent"]);
  const LIST_KEYS = ["domain", "difficulty", "outcome", "error", "type", "setting", "gold_class", "agent", "step", "benchmark"];
  const SORTS = {
    task: (r) => r._order, domain: (r) => r._domain_rank * 1e9 + r._order, score: (r) => r.value, official: (r) => r.official,
    verified: (r) => r.verified, class: (r) => r.gold_class, agent: (r) => r.agent_end, outcome: (r) => OUTCOMES.indexOf(r.outcome),
    error: (r) => r.error_kind, type: (r) => r.answer_type, difficulty: (r) => r.difficulty, wall: (r) => r.wall_s,
    cost: (r) => r.cost_usd, tokens: (r) => r.tokens, steps: (r) => r.steps, time: (r) => r.finished_at, line: (r) => r.line,
  };

  // ---- the data files: each a script calling KB_DATA(name, answer) ----
  const loaded = new Map();
  const waiting = new Map();
  window.KB_DATA = function (name, doc) {
    loaded.set(name, doc);
    const w = waiting.get(name);
    if (w) { waiting.delete(name); w.resolve(doc); }
  };
  function load(name) {
    if (loaded.has(name)) return Promise.resolve(loaded.get(name));
    if (waiting.has(name)) return waiting.get(name).promise;
    let resolve, reject;
    const promise = new Promise((a, b) => { resolve = a; reject = b; });
    waiting.set(name, { promise, resolve, reject });
    const s = document.createElement("script");
    s.src = "data/" + name + ".js";
    s.onerror = () => { waiting.delete(name); reject(new Error(`data/${name}.js: not in this bundle`)); };
    document.head.appendChild(s);
    return promise;
  }
  function index() { return load("index"); }
  async function runDir(name) {
    const ix = await index();
    const k = ix.runs[name];
    if (k === undefined) throw new Error(`no run ${JSON.stringify(name)} in this bundle (it holds ${Object.keys(ix.runs).join(", ")})`);
    return k;
  }

  // ---- the task table's query (kramabench.view.query, the same rules) ----
  function csv(v) { return v === null || v === undefined || v === "" ? [] : String(v).split(",").filter((x) => x !== ""); }
  function searchTerms(text) {
    const out = [];
    text.toLowerCase().split('"').forEach((part, k) => {
      if (k % 2) { if (part.trim()) out.push(part); } else out.push(...part.split(/\s+/).filter((x) => x));
    });
    return out;
  }
  function natKey(s) { return String(s || "").split(/(\d+)/).map((p, k) => (k % 2 ? [0, parseInt(p, 10)] : [1, p.toLowerCase()])); }
  function natCmp(a, b) {
    const x = natKey(a), y = natKey(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i][0] !== y[i][0]) return x[i][0] - y[i][0];
      if (x[i][1] < y[i][1]) return -1;
      if (x[i][1] > y[i][1]) return 1;
    }
    return x.length - y.length;
  }
  function parseQuery(p) {
    const q = { ignored: [] };
    const known = new Set([...LIST_KEYS, "q", "min", "max", "attempts", "sort", "offset", "limit"]);
    for (const [k, v] of p.entries()) if (!known.has(k)) q.ignored.push({ key: k, value: v, why: "not a filter of the task table" });
    for (const k of LIST_KEYS) q[k] = csv(p.get(k));
    const bad = q.outcome.filter((x) => !OUTCOMES.includes(x));
    for (const x of bad) q.ignored.push({ key: "outcome", value: x, why: `unknown outcome '${x}' (one of ${OUTCOMES.join(", ")})` });
    q.outcome = q.outcome.filter((x) => OUTCOMES.includes(x));
    q.q = p.get("q") || "";
    for (const k of ["min", "max"]) {
      const v = p.get(k);
      q[k] = null;
      if (v === null || v === "") continue;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0 || n > 100) q.ignored.push({ key: k, value: v, why: "a percent from 0 to 100" });
      else q[k] = n;
    }
    q.attempts = p.get("attempts") === "all" ? "all" : "latest";
    if (p.get("attempts") && !["all", "latest"].includes(p.get("attempts"))) q.ignored.push({ key: "attempts", value: p.get("attempts"), why: "latest or all" });
    q.sort = p.get("sort") || "task";
    if (!SORTS[q.sort.replace(/^-/, "")]) { q.ignored.push({ key: "sort", value: q.sort, why: `unknown sort '${q.sort}'` }); q.sort = "task"; }
    q.offset = Math.max(0, parseInt(p.get("offset") || "0", 10) || 0);
    q.limit = Math.min(1000, Math.max(1, parseInt(p.get("limit") || "100", 10) || 100));
    return q;
  }
  function tests(q) {
    const t = [];
    const set = (k) => new Set(q[k]);
    if (q.domain.length) { const s = set("domain"); t.push(["domain", (r) => s.has(r.domain)]); }
    if (q.difficulty.length) { const s = set("difficulty"); t.push(["difficulty", (r) => s.has(r.difficulty || "")]); }
    if (q.outcome.length) { const s = set("outcome"); t.push(["outcome", (r) => s.has(r.outcome)]); }
    if (q.error.length) { const s = set("error"); t.push(["error", (r) => s.has(r.error_kind || "none")]); }
    if (q.type.length) { const s = set("type"); t.push(["type", (r) => s.has(r.answer_type || "")]); }
    if (q.setting.length) { const s = set("setting"); t.push(["setting", (r) => s.has(r.setting)]); }
    if (q.gold_class.length) { const s = set("gold_class"); t.push(["gold_class", (r) => s.has(r.gold_class || "none")]); }
    if (q.agent.length) { const s = set("agent"); t.push(["agent", (r) => s.has(r.agent_end || "none")]); }
    for (const m of Object.keys(MULTI)) if (q[m].length) { const s = set(m); t.push([m, (r) => { const v = MULTI[m](r); return (v.length ? v : ["none"]).some((x) => s.has(x)); }]); }
    if (q.min !== null || q.max !== null) {
      const lo = q.min === null ? -1e-9 : q.min - 1e-9, hi = q.max === null ? 100 + 1e-9 : q.max + 1e-9;
      t.push(["score", (r) => r.value !== null && lo <= r.value * 100 && r.value * 100 <= hi]);
    }
    const words = searchTerms(q.q);
    if (words.length) t.push(["q", (r) => words.every((w) => r.text.includes(w))]);
    return t;
  }
  function sortRows(rows, sort) {
    const get = SORTS[sort.replace(/^-/, "")];
    if (sort === "task") return rows;
    const present = rows.filter((r) => get(r) !== null && get(r) !== undefined);
    const desc = sort.startsWith("-");
    present.sort((a, b) => { const x = get(a), y = get(b); const c = x < y ? -1 : x > y ? 1 : 0; return desc ? -c : c; });
    return [...present, ...rows.filter((r) => get(r) === null || get(r) === undefined)];
  }
  function facetValue(name, r) { return FACETS[name](r) || (NONE_FACETS.has(name) ? "none" : ""); }
  function multiValues(name, r) { const v = MULTI[name](r); return v.length ? v : ["none"]; }
  function runQuery(all, q) {
    const rows = q.attempts === "all" ? all : all.filter((r) => r.latest);
    const t = tests(q);
    const near = {};
    for (const n of [...Object.keys(FACETS), ...Object.keys(MULTI)]) near[n] = [];
    const hits = [];
    for (const r of rows) {
      const failed = t.filter(([, f]) => !f(r)).map(([n]) => n);
      if (!failed.length) hits.push(r);
      else if (failed.length === 1 && near[failed[0]]) near[failed[0]].push(r);
    }
    const facets = {};
    for (const name of Object.keys(FACETS)) {
      const universe = [...new Set(rows.map((r) => facetValue(name, r)))];
      const c = {};
      for (const r of [...hits, ...near[name]]) { const v = facetValue(name, r); c[v] = (c[v] || 0) + 1; }
      const keys = name === "outcome" ? OUTCOMES.filter((k) => universe.includes(k)) : universe.sort(natCmp);
      facets[name] = Object.fromEntries(keys.map((k) => [k, c[k] || 0]));
    }
    for (const name of Object.keys(MULTI)) {
      const universe = [...new Set(rows.flatMap((r) => multiValues(name, r)))];
      if (name === "benchmark" && !rows.some((r) => r.benchmark !== undefined)) continue;
      const c = {};
      for (const r of [...hits, ...near[name]]) for (const v of multiValues(name, r)) c[v] = (c[v] || 0) + 1;
      universe.sort((a, b) => (a === "none") - (b === "none") || natCmp(a, b));
      facets[name] = Object.fromEntries(universe.map((k) => [k, c[k] || 0]));
    }
    return { rows, hits: sortRows(hits, q.sort), facets, active: t.length > 0 };
  }
  // the score of what the filter keeps: each task the mean of its records (main setting, the attempts that
  // count), the mean over tasks; its interval when the bundle holds it (one domain, one difficulty)
  function kept(run, q, hits, p) {
    const active = LIST_KEYS.some((k) => q[k].length) || q.q || q.min !== null || q.max !== null;
    if (!active) return null;
    const only = [...p.keys()].filter((k) => !["attempts", "sort", "offset", "limit", "page"].includes(k));
    if (only.length === 1 && ["domain", "difficulty"].includes(only[0]) && q[only[0]].length === 1) {
      const pre = run.kept[`${only[0]}=${q[only[0]][0]}`];
      if (pre) return pre;
    }
    const setting = run.summary.golds ? run.summary.golds.setting : "end-to-end";
    const out = { setting, note: "its interval: in the live viewer (kramabench view)" };
    for (const g of ["verified", "official"]) {
      const tasks = new Map();
      for (const r of hits) {
        if (r.setting !== setting || !r.latest) continue;
        const k = r.domain + "\u0000" + r.task_id;
        if (!tasks.has(k)) tasks.set(k, []);
        tasks.get(k).push(r[g]);
      }
      const vals = [];
      let unscored = 0;
      for (const v of tasks.values()) {
        const s = v.filter((x) => x !== null);
        if (s.length) vals.push(s.reduce((a, b) => a + b, 0) / s.length); else unscored++;
      }
      out[g] = { score: vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : null, ci_low: null, ci_high: null,
        n_scored: vals.length, n_unscored: unscored, tasks: tasks.size };
    }
    return out;
  }

  async function rowsOf(name) {
    const k = await runDir(name);
    const run = await load(`${k}/rows`);
    if (!run._ready) {
      run.rows.forEach((r, n) => { r._order = n; });
      const doms = [...new Set(run.rows.map((r) => r.domain))].sort(natCmp);
      run.rows.forEach((r) => { r._domain_rank = doms.indexOf(r.domain); });
      run._ready = true;
    }
    return run;
  }
  async function rows(name, p) {
    const run = await rowsOf(name);
    const q = parseQuery(p);
    const res = runQuery(run.rows, q);
    return { total: res.hits.length, all: res.rows.length, offset: q.offset, limit: q.limit, rows: res.hits.slice(q.offset, q.offset + q.limit),
      facets: res.facets, version: run.summary.version, summary: run.summary, ignored: q.ignored, kept: kept(run, q, res.hits, p) };
  }
  async function nav(name, p) {
    const run = await rowsOf(name);
    const x = new URLSearchParams(p);
    const i = parseInt(x.get("i"), 10);
    for (const k of ["i", "offset", "limit", "page"]) x.delete(k);
    const q = parseQuery(x);
    const hits = runQuery(run.rows, q).hits;
    const at = hits.findIndex((r) => r.i === i);
    const brief = (k) => (k < 0 || k >= hits.length ? null : { i: hits[k].i, task_id: hits[k].task_id, subtask_id: hits[k].subtask_id, position: k + 1 });
    return { total: hits.length, position: at < 0 ? null : at + 1, prev: at < 0 ? null : brief(at - 1), next: at < 0 ? null : brief(at + 1),
      first: at < 0 ? brief(0) : null, ignored: q.ignored };
  }
  function valueAt(doc, path) {
    let x = doc;
    for (const part of path.split("/").slice(1)) {
      const k = part.replace(/~1/g, "/").replace(/~0/g, "~");
      if (x === null || typeof x !== "object" || !(k in x)) throw new Error(`the record has no value at '${path}'`);
      x = x[k];
    }
    return x;
  }
  async function field(name, p) {
    const k = await runDir(name);
    const i = p.get("i"), path = p.get("path") || "";
    const rec = await load(`${k}/rec/${i}`);
    if (rec.cuts && rec.cuts[path]) {
      const full = await load(`${k}/full/${i}`);
      return { path, value: full[path] };
    }
    return { path, value: valueAt(rec.record, path) };
  }
  async function calls(name, p, one) {
    const k = await runDir(name);
    const doc = await load(`${k}/calls/${p.get("i")}`);
    if (!one) return doc.doc;
    const key = `${p.get("kind") || "solve"}:${p.get("index")}`;
    const c = doc.calls[key];
    if (!c) throw new Error(`no ${key} call of this record in this bundle`);
    const call = Object.assign({}, c.call, { messages: (c.call.messages || []).map((id) => doc.messages[id]) });
    return Object.assign({}, c, { call });
  }

  // ---- a comparison: the bundle holds each ordered choice of its runs whole; the filters are applied here ----
  async function compare(p) {
    const names = csv(p.get("runs"));
    const ix = await index();
    const twice = names.filter((x, k) => names.indexOf(x) !== k);
    if (twice.length) throw new Error(`runs: the same run twice (${[...new Set(twice)].join(", ")}): a comparison needs different runs`);
    const gold = p.get("gold") === "official" || p.get("gold") === "verified" ? p.get("gold") : null;
    const file = ix.compare[names.join(",")];
    if (!file) throw new Error(`this bundle holds no comparison of ${names.join(", ")} (it holds: ${Object.keys(ix.compare).join("; ") || "none"})`);
    const both = await load(file);
    const doc = both[gold || both.default_gold];
    const ignored = [];
    if (p.get("gold") && !gold) ignored.push({ key: "gold", value: p.get("gold"), why: "verified or official" });
    const only = p.get("only") || "all";
    if (!["all", "differ", "same"].includes(only)) ignored.push({ key: "only", value: only, why: "all, differ or same" });
    const doms = csv(p.get("domain"));
    const words = searchTerms(p.get("q") || "");
    const texts = words.length ? await Promise.all(names.map((n) => rowsOf(n).then((r) => new Map(r.rows.map((x) => [x.i, x.text]))))) : null;
    const kept = doc.rows.filter((row) => {
      if (doms.length && !doms.includes(row.domain)) return false;
      if (only === "differ" && !row.differ) return false;
      if (only === "same" && row.differ) return false;
      if (words.length && !row.cells.some((c, k) => c.present && words.every((w) => (texts[k].get(c.i) || "").includes(w)))) return false;
      return true;
    });
    const offset = Math.max(0, parseInt(p.get("offset") || "0", 10) || 0);
    const limit = Math.min(1000, Math.max(1, parseInt(p.get("limit") || "100", 10) || 100));
    return Object.assign({}, doc, { total: kept.length, offset, rows: kept.slice(offset, offset + limit), ignored });
  }

  async function api(path, p) {
    const parts = path.split("/").slice(1).map(decodeURIComponent);  // ["api", "runs", name, what]
    if (parts[1] === "compare") return compare(p);
    if (parts[1] !== "runs") throw new Error(`${path}: not in a bundle`);
    if (parts.length === 2) return load("runs");
    const name = parts[2];
    const k = await runDir(name);
    const what = parts[3];
    if (!what) return load(`${k}/run`);
    if (what === "rows") return rows(name, p);
    if (what === "nav") return nav(name, p);
    if (what === "golds") return load(`${k}/golds`);
    if (what === "breakdown") return load(`${k}/breakdown`);
    if (what === "record") return load(`${k}/rec/${p.get("i")}`);
    if (what === "field") return field(name, p);
    if (what === "calls") return calls(name, p, false);
    if (what === "call") return calls(name, p, true);
    if (what === "preview") {
      const ix = await index();
      const a = (ix.artifacts[name] || {})[p.get("path")];
      if (!a || !a.preview) throw new Error(`${p.get("path")}: not in this bundle`);
      return load(a.preview);
    }
    throw new Error(`${path}: not in a bundle`);
  }

  let ixNow = null;
  index().then((ix) => { ixNow = ix; });
  window.KB_LOCAL = {
    api,
    // an artifact's copy in the bundle (an image by its own name; any other file as text or bytes, never a page)
    artifactUrl(run, path) {
      const a = ixNow && (ixNow.artifacts[run] || {})[path];
      return a && a.file ? "data/" + a.file : "data:text/plain,not%20in%20this%20bundle";
    },
    imageUrl(run, path) {
      const a = ixNow && (ixNow.artifacts[run] || {})[path];
      return a ? (a.image ? "data/" + a.image : a.image_url || null) : null;
    },
    // the file holding a record's whole values (opened as text)
    fullUrl(run, i) { const k = ixNow && ixNow.runs[run]; return k === undefined ? null : `data/${k}/full/${i}.js`; },
    ready: index,
  };
})();
