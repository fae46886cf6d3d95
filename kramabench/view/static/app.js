// kramabench view: the page. Plain JavaScript, no build step, no dependency.
//
// Everything that comes from a run folder is put into the page as text (text nodes, textContent,
// attribute values set through the DOM), never as HTML; control and invisible characters (bidi overrides,
// zero-width characters, escape codes) are shown as visible escapes (\u202e), as the static report shows
// them. Highlighted code and Markdown arrive as data (runs of text with a class, a tree of allowed tags)
// and are built here with createElement and text nodes. The state of a view (which run, which filter,
// which task) lives in the URL's query string, so a view can be shared and reloaded. A view is built once
// and then updated in place (keyed rows, chips updated where they are): a search box being typed in is
// never replaced, its focus, caret and an input method's composition are kept through live updates.
"use strict";

(function () {
  const LOCAL = window.KB_LOCAL || null;  // a bundle: the answers come from its files, not from a server
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  const liveEl = document.getElementById("live");
  const PAGE = 100;
  const FACET_LABELS = { domain: "Domain", difficulty: "Difficulty", outcome: "Outcome", error: "Error", type: "Answer type", setting: "Setting",
    gold_class: "Gold class", agent: "Agent ended", step: "In a step", benchmark: "Benchmark cannot support" };
  // how a benchmark note reads on a chip (the tasks the benchmark cannot support as written; none: it can)
  const BENCHMARK_LABELS = { none: "supported", data_source_missing: "data source missing", not_reproducible: "data source absent upstream",
    data_source_outside_lake: "data source outside the lake", reviewed_unreproducible: "reviewed unreproducible",
    solution_needs_module: "solution needs a module the sandbox lacks" };
  // how a step outcome reads on a chip ("In a step": the records where it happened at least once)
  const STEP_LABELS = { timeout: "timed out", error: "raised an error", format_error: "reply without code", oom: "out of memory",
    crashed: "interpreter crashed", answer_error: "unreadable final answer", model_error: "model error", none: "none of these" };
  const ROW_FILTERS = ["q", "domain", "difficulty", "outcome", "error", "type", "setting", "gold_class", "agent", "step", "benchmark", "min", "max", "attempts", "sort", "page"];
  // how the golds are named (as the report and `kramabench score` name them)
  const GOLD_NAMES = { verified: "verified", official: "official (paper-comparable)" };
  const TYPING_PAUSE_MS = 250;

  // ---- text from data: control and invisible characters as visible escapes (kramabench.contracts.text) ----
  const UNSAFE_MULTI = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}\ud800-\udfff]/gu;
  const UNSAFE_ONE = /[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}\ud800-\udfff]/gu;
  const NAMED = { "\n": "\\n", "\t": "\\t", "\r": "\\r" };
  function hex(n, w) { return n.toString(16).padStart(w, "0"); }
  function escapeChar(c) {
    if (NAMED[c]) return NAMED[c];
    const o = c.codePointAt(0);
    return o < 0x100 ? "\\x" + hex(o, 2) : o < 0x10000 ? "\\u" + hex(o, 4) : "\\U" + hex(o, 8);
  }
  // text as shown: newlines and tabs kept (one: escaped too, for ids and one-line labels)
  function safe(s, one) {
    const t = typeof s === "string" ? s : String(s);
    const re = one ? UNSAFE_ONE : UNSAFE_MULTI;
    re.lastIndex = 0;
    if (!re.test(t)) return t;
    re.lastIndex = 0;
    return t.replace(re, escapeChar);
  }
  window.kbSafeText = safe;  // for the tests: the same function the page uses

  // ---- DOM helpers: children that are strings become text nodes ----
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") el.className = v;
        else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
        else if (k === "text") el.textContent = safe(v);
        else if (k === "title") el.setAttribute("title", safe(v));
        else el.setAttribute(k, v === true ? "" : String(v));
      }
    }
    add(el, kids);
    return el;
  }
  function add(el, kids) {
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) add(el, k);
      else if (k instanceof Node) el.appendChild(k);
      else el.appendChild(document.createTextNode(safe(String(k))));
    }
  }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  // replace an element's children only when what they show changed (a signature of the data)
  function fill(el, sig, ...kids) {
    if (el._sig === sig) return false;
    el._sig = sig;
    clear(el);
    add(el, kids);
    return true;
  }
  function setText(el, s) { const t = safe(s); if (el.textContent !== t) el.textContent = t; }
  // keyed children: one element per key, kept (and updated in place) while its key stays
  function keyed(parent, items, keyOf, create, update) {
    const old = new Map();
    for (const el of parent.children) if (el._key !== undefined) old.set(el._key, el);
    let at = parent.firstElementChild;
    for (const it of items) {
      const k = keyOf(it);
      let el = old.get(k);
      if (el) { old.delete(k); update(el, it); } else { el = create(it); el._key = k; update(el, it); }
      if (el === at) at = at.nextElementSibling;
      else parent.insertBefore(el, at);
    }
    for (const el of old.values()) el.remove();
  }
  function pre(text, cls) { return h("pre", { class: cls || "" }, text); }
  function json(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
  function pct(v, d) { return v === null || v === undefined || typeof v !== "number" ? "–" : (v * 100).toFixed(d === undefined ? 1 : d); }
  function num(v, d) { return v === null || v === undefined || typeof v !== "number" ? "–" : Number(v).toFixed(d); }
  function int(v) { return v === null || v === undefined || typeof v !== "number" ? "–" : Math.round(v).toLocaleString("en-US"); }
  function ci(lo, hi) { return lo === null || lo === undefined ? "" : `[${pct(lo)}, ${pct(hi)}]`; }
  // a p-value as a paper prints it: p < 0.001, never p = 0.000
  function pText(p) { return p === null || p === undefined ? "" : p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`; }
  function secs(s) { return s === null || s === undefined || typeof s !== "number" ? "–" : s < 10 ? s.toFixed(2) + " s" : s < 600 ? s.toFixed(1) + " s" : (s / 60).toFixed(1) + " min"; }
  function bytes(n) {
    if (n === null || n === undefined) return "";
    const u = ["B", "kB", "MB", "GB"]; let i = 0; let x = n;
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (i ? x.toFixed(1) : String(x)) + " " + u[i];
  }
  function plural(n, one, many) { return `${int(n)} ${n === 1 ? one : (many || one + "s")}`; }
  // a date on one line: 2026-03-01 09:00 (UTC)
  function when(s) { if (!s) return ""; const m = String(s).match(/^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)/); return m ? `${m[1]} ${m[2]}` : String(s); }
  // the cost as every surface tells it (the one helper: a run's, a task's): the server's cost_text, "unknown
  // (N unpriced calls)" when a price is missing, never a partial sum that reads as the whole; bare: a task's
  // cell in a column headed "Cost $"
  function costText(x, bare) {
    if (bare) return x.unpriced_calls ? "unknown" : x.cost_usd === null || x.cost_usd === undefined ? "?" : num(x.cost_usd, 4);
    if (x.cost_text) return x.cost_text;
    return x.cost_usd === null || x.cost_usd === undefined ? "–" : "$" + num(x.cost_usd, 4);
  }
  // an id from data: one line, escapes visible; cut (the whole id on hover) when very long
  const ID_CHARS = 120;
  function idText(s, n) {
    const t = safe(s === null || s === undefined ? "" : s, true);
    const max = n || ID_CHARS;
    return t.length > max ? t.slice(0, max - 1) + "…" : t;
  }
  function idSpan(s, n, cls) {
    const t = safe(s === null || s === undefined ? "" : s, true);
    const cut = idText(s, n);
    const el = h("span", { class: "id" + (cls ? " " + cls : "") }, document.createTextNode(cut));
    if (cut !== t) el.setAttribute("title", t);
    return el;
  }

  // ---- the URL is the state ----
  function params() { return new URLSearchParams(location.search); }
  function href(p) { const s = p.toString(); return s ? "?" + s : (LOCAL ? "?" : "/"); }
  function link(p, ...kids) {
    const url = href(p);
    return h("a", { href: url, onclick: (e) => { if (e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey) { e.preventDefault(); go(url); } } }, ...kids);
  }
  function go(url, replace) {
    if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
    render();
  }
  window.addEventListener("popstate", () => render());

  async function api(path, p) {
    if (LOCAL) return LOCAL.api(path, p || new URLSearchParams());
    const url = path + (p && p.toString() ? "?" + p.toString() : "");
    const res = await fetch(url, { headers: { Accept: "application/json" } });
    let doc;
    try { doc = await res.json(); } catch (e) { throw new Error(`${url}: not JSON (${res.status})`); }
    if (!res.ok) throw new Error(doc && doc.error ? doc.error : `${url}: HTTP ${res.status}`);
    return doc;
  }
  function apiRun(name, what) { return "/api/runs/" + encodeURIComponent(name) + (what ? "/" + what : ""); }
  function artifactUrl(run, path) { return LOCAL ? LOCAL.artifactUrl(run, path) : apiRun(run, "artifact") + "?path=" + encodeURIComponent(path); }
  function fieldTextUrl(run, i, path) { return LOCAL ? LOCAL.fullUrl(run, i) : apiRun(run, "field") + "?" + new URLSearchParams({ i: String(i), path, format: "text" }).toString(); }
  function rawUrl(run, i) { return LOCAL ? null : apiRun(run, "raw") + "?i=" + encodeURIComponent(String(i)); }

  function failure(err) { return h("div", { class: "problem error" }, "Error: ", String(err && err.message ? err.message : err)); }
  // what the address asked that the viewer left out (a bad filter value): said, the rest shown
  function ignoredNote(box, ignored) {
    const list = ignored || [];
    fill(box, JSON.stringify(list), list.length ? h("div", { class: "problem warn ignored" }, "Ignored in the address: ",
      list.map((x, k) => [k ? "; " : "", h("code", null, `${x.key}=${x.value}`), ` (${x.why})`]), ". The rest of the view is shown.") : null);
  }

  // ---- live updates: one event stream; the current view decides what to refresh ----
  let view = null;   // the current page: {kind, key, update(p), refresh(ev)}
  let lastEvent = null;
  function connect() {
    if (LOCAL) { liveEl.textContent = "static copy (no live updates)"; liveEl.className = "live off"; return; }
    if (!window.EventSource) { liveEl.textContent = "○ no live updates"; return; }
    const es = new EventSource("/api/events");
    es.addEventListener("open", () => { liveEl.textContent = "● live"; liveEl.className = "live on"; });
    es.addEventListener("error", () => { liveEl.textContent = "○ reconnecting"; liveEl.className = "live off"; });
    es.addEventListener("change", (ev) => {
      let doc; try { doc = JSON.parse(ev.data); } catch (e) { return; }
      const first = lastEvent === null;
      lastEvent = doc;
      if (!first && view && view.refresh) view.refresh(doc);
    });
  }

  let renderSeq = 0;
  function pageOf(p) {
    if (p.get("compare")) return p.get("diff") ? ["diff", p.get("compare") + "|" + p.get("diff")] : ["compare", p.get("compare")];
    if (p.get("run") && p.get("i") !== null) return ["task", p.get("run") + "|" + p.get("i")];
    if (p.get("run")) return ["run", p.get("run")];
    return ["runs", ""];
  }
  function render() {
    const p = params();
    const [kind, key] = pageOf(p);
    if (view && view.kind === kind && view.key === key && view.update) { view.update(p); return; }
    renderSeq++;
    view = null;
    clear(crumbs);
    const seq = renderSeq;
    const pages = { runs: runsView, run: runView, task: taskView, compare: compareView, diff: diffView };
    return pages[kind](p, seq);
  }
  function current(seq) { return seq === renderSeq; }
  function setCrumbs(...items) {
    clear(crumbs);
    items.forEach((it) => { add(crumbs, [h("span", { class: "sep" }, "›"), it]); });
  }
  // a page's view object: its kind and key decide whether a new address updates it or builds another page
  function setView(seq, kind, key, obj) { if (current(seq)) view = Object.assign({ kind, key }, obj); }

  // a search box: built once, never replaced; its value sent after a pause in the typing (not while an input
  // method composes); a later change of the address updates it only when it is not being typed in
  function searchBox(id, placeholder, value, onValue) {
    const el = h("input", { id, type: "search", placeholder, value: value || "", autocomplete: "off", spellcheck: "false", "aria-label": placeholder });
    let timer = null;
    let composing = false;
    const send = () => { clearTimeout(timer); timer = null; onValue(el.value.trim()); };
    const later = () => { clearTimeout(timer); timer = setTimeout(send, TYPING_PAUSE_MS); };
    el.addEventListener("compositionstart", () => { composing = true; clearTimeout(timer); });
    el.addEventListener("compositionend", () => { composing = false; later(); });
    el.addEventListener("input", (e) => { if (composing || e.isComposing) return; later(); });
    el.addEventListener("keydown", (e) => { if (e.key === "Enter" && !composing && !e.isComposing) send(); });
    el.sync = (v) => { if (document.activeElement !== el && !composing && timer === null && el.value !== (v || "")) el.value = v || ""; };
    return el;
  }
  // a number box, sent after a pause as the search box
  function numberBox(id, placeholder, value, onValue) {
    const el = h("input", { id, type: "number", min: "0", max: "100", step: "any", placeholder, value: value || "", "aria-label": placeholder });
    let timer = null;
    const send = () => { clearTimeout(timer); timer = null; onValue(el.value); };
    el.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(send, 400); });
    el.addEventListener("change", send);
    el.sync = (v) => { if (document.activeElement !== el && timer === null && el.value !== (v || "")) el.value = v || ""; };
    return el;
  }
  // a run's table header row, updated in place (the focused sort button keeps its focus)
  function headRow(tr, cols, cur, onSort) {
    keyed(tr, cols, (c) => c.key ? "s:" + c.key : "c:" + c.label, (c) => c.key ? h("th", { "data-sort": c.key, scope: "col", onclick: () => onSort(tr._next[c.key]) },
      h("button", { type: "button", class: "sort" })) : h("th", { scope: "col", class: c.cls || "" }, c.label), (th, c) => {
      if (!c.key) return;
      tr._next = tr._next || {};
      const active = (cur || "").replace(/^-/, "") === c.key;
      const desc = (cur || "").startsWith("-");
      tr._next[c.key] = active && !desc ? "-" + c.key : c.key;
      th.className = (c.cls || "") + " sortable" + (active ? " active" : "");
      th.setAttribute("aria-sort", active ? (desc ? "descending" : "ascending") : "none");
      const b = th.firstChild;
      setText(b, c.label + (active ? (desc ? " ▼" : " ▲") : ""));
      b.title = `sort by ${c.label}` + (active && !desc ? " (again: descending)" : "");
    });
  }

  // ---- badges ----
  function statusBadge(s) {
    const st = s.status || "unknown";
    return h("span", { class: "badge status-" + st, title: s.owner_gone ? "the manifest says running, but the run's process is gone" : null }, st);
  }
  function outcomeBadge(o) { return h("span", { class: "badge oc-" + o }, o); }
  function progress(s) {
    const done = s.done || 0;
    const total = s.planned;
    const box = h("span", { class: "progress" });
    if (total) {
      const bar = h("span", { class: "bar" }, h("span", { class: "fill" }));
      bar.firstChild.style.width = Math.min(100, (100 * done) / total).toFixed(1) + "%";
      add(box, [bar, ` ${int(done)}/${int(total)}`]);
    } else add(box, [int(done)]);
    return box;
  }
  // a run's score against one gold, with its interval (the report's numbers: main setting, per task)
  function goldOf(s, g) { return (s.golds && s.golds[g]) || { score: null, ci_low: null, ci_high: null, n_unscored: 0 }; }
  function goldCell(s, g) {
    const x = goldOf(s, g);
    const own = s.run_gold === g;
    return h("td", { class: "num score " + g, title: `${GOLD_NAMES[g]} gold` + (own ? " (the gold this run loaded)" : "") + (s.golds ? ` · ${s.golds.setting}, ${x.tasks} tasks` : "") },
      h("b", null, pct(x.score)), " ", h("span", { class: "muted ci" }, ci(x.ci_low, x.ci_high)),
      x.n_unscored ? h("span", { class: "muted" }, ` +${x.n_unscored}u`) : null,
      g === "official" && s.run_gold === "official" ? h("div", { class: "small muted" }, "--no-errata run") : null);
  }
  function runTitle(s) { return [s.system || "(no system)", s.model ? " · " + s.model : ""].join(""); }
  // a run that stopped (interrupted, or its process gone): why, and the command that resumes it
  function resumeBox(s) {
    if (s.status !== "interrupted") return null;
    return h("div", { class: "problem warn resume", id: "resume" }, h("b", null, "Interrupted"), s.stop_reason ? [": ", s.stop_reason] : "",
      s.resume ? [h("div", { class: "small" }, "Resume it (the recorded tasks are kept, the others run): "), h("code", { class: "cmd" }, s.resume)] : null);
  }

  // ================= the run list =================
  const RUN_FACETS = [["system", "System"], ["model", "Model"], ["workload", "Workload"], ["setting", "Setting"], ["status", "Status"]];
  const RUN_SORTS = {
    run: (s) => s.run, system: (s) => runTitle(s).toLowerCase(), workload: (s) => (s.workload || "") + " " + (s.setting || ""),
    status: (s) => s.status, done: (s) => s.done, verified: (s) => goldOf(s, "verified").score, official: (s) => goldOf(s, "official").score,
    errors: (s) => s.errors, cost: (s) => s.cost_usd, started: (s) => s.created_at || "",
  };
  const selected = new Set();
  function runText(s) { return [s.run, s.system, s.model, s.workload, s.setting, s.status, s.stop_reason, s.created_at].filter((x) => x).join(" ").toLowerCase(); }
  function runsView(p, seq) {
    document.title = "kramabench view";
    clear(main);
    const btn = h("button", { id: "compare-btn", disabled: true, onclick: () => {
      const q = new URLSearchParams(); q.set("compare", [...selected].join(",")); go(href(q));
    } }, "Compare selected (0)");
    const syncBtn = () => { btn.disabled = selected.size < 2; setText(btn, `Compare selected (${selected.size})`); };
    const resultsEl = h("span", { class: "muted results-path" });
    const search = searchBox("runs-search", "Search runs (id, system, model, workload…)", p.get("q"), (v) => setParam("q", v, true));
    const facetBox = h("div", { id: "run-facets" });
    const filters = h("div", { class: "filters" }, h("div", { class: "filter-line" }, search,
      h("a", { href: "#", id: "clear", onclick: (e) => { e.preventDefault(); go(href(new URLSearchParams())); } }, "clear filters")), facetBox);
    const count = h("div", { id: "count", class: "muted" });
    const head = h("tr");
    const tb = h("tbody");
    const table = h("table", { class: "grid runs" }, h("thead", null, head), tb);
    const empty = h("div");
    main.append(h("div", { class: "bar-line" }, h("h1", null, "Runs"), resultsEl, btn), filters, count, table, empty);
    let doc = null;
    function setParam(k, v, replace) {
      const n = params();
      if (v === "" || v === null) n.delete(k); else n.set(k, v);
      go(href(n), replace);
    }
    function draw() {
      if (!doc || !current(seq)) return;
      const cur = params();
      search.sync(cur.get("q"));
      setText(resultsEl, doc.results);
      const chosen = Object.fromEntries(RUN_FACETS.map(([k]) => [k, (cur.get(k) || "").split(",").filter((x) => x)]));
      const words = (cur.get("q") || "").toLowerCase().split(/\s+/).filter((x) => x);
      const keep = (s, except) => RUN_FACETS.every(([k]) => k === except || !chosen[k].length || chosen[k].includes(s[k] || "")) &&
        words.every((w) => runText(s).includes(w));
      // the chips: each value with how many runs it would give, the other filters kept
      const lines = [];
      for (const [k, label] of RUN_FACETS) {
        const values = [...new Set([...doc.runs.map((s) => s[k] || ""), ...chosen[k]])].sort();
        if (values.length <= 1 && !chosen[k].length) continue;
        lines.push({ k, label, values: values.map((v) => ({ v, n: doc.runs.filter((s) => (s[k] || "") === v && keep(s, k)).length, on: chosen[k].includes(v) })) });
      }
      keyed(facetBox, lines, (x) => x.k, (x) => h("div", { class: "facet", "data-facet": x.k }, h("span", { class: "facet-name" }, x.label)), (line, x) => {
        keyed(line, [{ name: true }, ...x.values], (c) => c.name ? "#name" : "v:" + c.v, (c) => c.name ? line.firstChild :
          h("button", { type: "button", class: "chip", "data-value": c.v, onclick: () => {
            const now = (params().get(x.k) || "").split(",").filter((y) => y);
            setParam(x.k, now.includes(c.v) ? now.filter((y) => y !== c.v).join(",") : [...now, c.v].join(","), false);
          } }, h("span", { class: "label" }), h("span", { class: "n" })), (el, c) => {
          if (c.name) return;
          el.className = "chip" + (c.on ? " on" : "");
          el.setAttribute("aria-pressed", c.on ? "true" : "false");
          setText(el.firstChild, c.v === "" ? "(none)" : idText(c.v, 40));
          setText(el.lastChild, String(c.n));
        });
      });
      let runs = doc.runs.filter((s) => keep(s, null));
      const sort = cur.get("sort") || "";
      if (sort && RUN_SORTS[sort.replace(/^-/, "")]) {
        const get = RUN_SORTS[sort.replace(/^-/, "")];
        const desc = sort.startsWith("-");
        const present = runs.filter((s) => get(s) !== null && get(s) !== undefined);
        present.sort((a, b) => { const x = get(a), y = get(b); const c = x < y ? -1 : x > y ? 1 : 0; return desc ? -c : c; });
        runs = [...present, ...runs.filter((s) => get(s) === null || get(s) === undefined)];
      }
      count.dataset.total = String(runs.length);
      count.dataset.query = cur.toString();
      setText(count, runs.length === doc.runs.length ? plural(doc.runs.length, "run") : `${runs.length} of ${plural(doc.runs.length, "run")} match`);
      headRow(head, [{ label: "" }, { label: "Run", key: "run" }, { label: "System · model", key: "system" }, { label: "Workload · setting", key: "workload" },
        { label: "Status", key: "status" }, { label: "Done", key: "done", cls: "num" }, { label: "Verified % [95% CI]", key: "verified", cls: "num" },
        { label: "Official % (paper-comparable)", key: "official", cls: "num" }, { label: "Errors", key: "errors", cls: "num" },
        { label: "Cost", key: "cost", cls: "num" }], sort, (next) => setParam("sort", next === "started" ? "" : next, false));
      keyed(tb, runs, (s) => s.run, (s) => h("tr", { class: "run", "data-run": s.run }), (tr, s) => {
        const sig = JSON.stringify([s, selected.has(s.run)]);
        if (tr._sig === sig) return;
        tr._sig = sig;
        const focused = tr.contains(document.activeElement) ? document.activeElement.className : null;
        clear(tr);
        const cb = h("input", { type: "checkbox", class: "pick", "data-run": s.run, "aria-label": "select " + idText(s.run), checked: selected.has(s.run) ? true : null, onchange: (e) => {
          if (e.target.checked) selected.add(s.run); else selected.delete(s.run);
          syncBtn();
        } });
        const q = new URLSearchParams(); q.set("run", s.run);
        add(tr, [h("td", null, cb),
          h("td", { class: "run-id" }, link(q, idSpan(s.run, 60)), h("div", { class: "small muted nowrap" }, when(s.created_at))),
          h("td", { class: "wrap-any" }, s.system || "–", s.model ? h("div", { class: "small muted" }, idText(s.model, 60)) : null),
          h("td", { class: "wrap-any" }, s.workload || "–", s.setting ? h("div", { class: "small muted" }, s.setting) : null),
          h("td", null, statusBadge(s), s.stop_reason ? h("div", { class: "muted small clip", title: s.stop_reason }, s.stop_reason) : null,
            s.problems ? h("div", null, h("span", { class: "badge warn", title: "problems with this run's files" }, plural(s.problems, "problem"))) : null),
          h("td", { class: "num done" }, progress(s)),
          goldCell(s, "verified"), goldCell(s, "official"),
          h("td", { class: "num" }, int(s.errors), s.unsupported ? h("div", { class: "small muted unsupported", title: "tasks the benchmark cannot support (scored as the paper does)" }, `${int(s.unsupported)} unsupported`) : null),
          h("td", { class: "num cost" }, costText(s))]);
        if (focused) { const el = tr.querySelector("." + focused.split(" ")[0]); if (el) el.focus(); }
      });
      setText(empty, doc.runs.length ? (runs.length ? "" : "No run matches this filter.") : "No run folders here yet (a folder with manifest.json or records.jsonl). New runs appear as they start.");
      empty.className = "muted";
      for (const name of [...selected]) if (!doc.runs.some((s) => s.run === name)) selected.delete(name);
      syncBtn();
    }
    async function load() {
      try { const d = await api("/api/runs"); if (!current(seq)) return; doc = d; draw(); } catch (e) { if (current(seq) && !doc) { clear(main); main.appendChild(failure(e)); } }
    }
    load();
    setView(seq, "runs", "", { update: () => draw(), refresh: () => load() });
  }

  // ================= one run: the task table =================
  function rowQuery(p) {
    const q = new URLSearchParams();
    for (const k of ROW_FILTERS) {
      if (k === "page") continue;
      const v = p.get(k);
      if (v !== null && v !== "") q.set(k, v);
    }
    const page = Math.max(0, parseInt(p.get("page") || "1", 10) - 1 || 0);
    q.set("offset", String(page * PAGE));
    q.set("limit", String(PAGE));
    return q;
  }

  function scoreBlock(label, x, cls, big) {
    return h("span", { class: "gold-score " + cls }, h("span", { class: "muted small" }, label + " "),
      h(big ? "span" : "b", { class: big ? "big" : "" }, pct(x.score), "%"), " ", h("span", { class: "muted ci" }, ci(x.ci_low, x.ci_high)),
      x.n_unscored ? h("span", { class: "muted small" }, ` +${x.n_unscored} unscored`) : null);
  }
  function summaryLine(s, kept) {
    const v = goldOf(s, "verified"), o = goldOf(s, "official");
    return h("div", { class: "summary" },
      h("span", { class: "whole" }, scoreBlock("verified", v, "verified", true), " ", scoreBlock("official (paper-comparable)", o, "official")),
      kept ? h("span", { class: "kept", id: "kept", title: "the score of the tasks the filter keeps (the run's main setting, each task the mean of its records), with its 95% bootstrap interval" },
        h("span", { class: "muted small" }, `what the filter keeps (${plural(kept.verified.tasks, "task")}): `),
        scoreBlock("verified", kept.verified, "verified"), " ", scoreBlock("official", kept.official, "official")) : null,
      h("span", { class: "stat" }, statusBadge(s)),
      h("span", { class: "stat" }, "done ", progress(s)),
      h("span", { class: "stat" }, plural(s.errors, "error")),
      h("span", { class: "stat" }, `${int(s.unscored)} unscored`),
      s.unsupported ? h("span", { class: "stat unsupported", title: "tasks whose data sources are missing from the lake (or that the benchmark cannot support otherwise): scored as the paper does; filter them with “Benchmark cannot support”" },
        `${int(s.unsupported)} the benchmark cannot support`) : null,
      h("span", { class: "stat cost" }, costText(s)),
      h("span", { class: "stat tokens" }, `${int(s.tokens)} tokens`),
      s.workload ? h("span", { class: "stat" }, "workload ", idText(s.workload, 60)) : null,
      s.setting ? h("span", { class: "stat" }, s.setting) : null,
      s.n_with_steps ? h("div", { class: "agent-totals", id: "agent-totals" },
        h("span", { class: "stat" }, h("b", null, int(s.steps)), ` steps (${(s.steps / s.n_with_steps).toFixed(1)} per task)`),
        h("span", { class: "stat" }, h("b", null, int(s.format_errors)), " replies without code"),
        h("span", { class: "stat" }, h("b", null, int(s.step_timeouts)), " steps timed out"),
        h("span", { class: "stat" }, "ended: ", Object.entries(s.agent_ends || {}).map(([k, n]) => `${k} ${n}`).join(" · "))) : null);
  }

  // the floors in one line (verified / official): what constant answers get on the same tasks
  function floorsLine(doc) {
    const fl = doc.golds;
    if (doc.floor_note) return [h("span", { class: "muted", "data-floor": "note" }, doc.floor_note)];
    if (!doc.floors_apply) return [h("span", { class: "muted" }, `none for ${doc.setting} (judged, not against gold answers)`)];
    if (!fl.verified.n && !fl.official.n) return [h("span", { class: "muted" }, "no scored tasks yet")];
    const both = (f) => `${pct(f(fl.verified))} / ${pct(f(fl.official))}`;
    const parts = Object.entries(doc.floor_titles).map(([k, t]) => [t + " ", h("b", { "data-floor": k }, both((x) => x.n ? x.floors[k] : null))]);
    if (fl.verified.n_numeric || fl.official.n_numeric) parts.push(["this run bounded ", h("b", { "data-floor": "bounded" }, both((x) => x.system_bounded))]);
    const out = [h("span", { class: "muted small" }, "(verified / official %) ")];
    parts.forEach((x, k) => { if (k) out.push(h("span", { class: "muted" }, " · ")); out.push(...x); });
    out.push(h("span", { class: "muted small" }, " — both golds in full"));
    return out;
  }

  // the run's scores against both golds beside the floors, as the report's golds section (computed on request)
  function floorsTable(doc) {
    const G = ["official", "verified"];
    const tb = h("tbody");
    const line = (kind, label, vals, key) => tb.appendChild(h("tr", { class: "gl " + kind, "data-line": key || "" }, h("td", null, label),
      vals.map((v) => h("td", { class: "num" }, v === null || v === undefined ? "–" : pct(v)))));
    const sc = doc.scores;
    tb.appendChild(h("tr", { class: "gl system", "data-line": "system" }, h("td", null, "this run"),
      G.map((g) => h("td", { class: "num" }, h("b", null, pct(sc[g].score)), " ", h("span", { class: "muted" }, ci(sc[g].ci_low, sc[g].ci_high))))));
    const fl = doc.golds;
    if (doc.floors_apply && (fl.official.n || fl.verified.n)) {
      for (const [k, title] of Object.entries(doc.floor_titles)) line("floor", "floor: " + title, G.map((g) => fl[g].n ? fl[g].floors[k] : null), "floor-" + k);
      if (fl.official.n_numeric || fl.verified.n_numeric) {
        line("bounded", `this run, bounded (numeric within band, 1/(1+RAE) > ${doc.band_threshold})`, G.map((g) => fl[g].system_bounded), "bounded");
        line("floor", "floor: constant 0, bounded", G.map((g) => fl[g].floors_bounded.zero), "floor-zero-bounded");
        const n = fl.official.n_numeric === fl.verified.n_numeric ? String(fl.verified.n_numeric) : `${fl.official.n_numeric} / ${fl.verified.n_numeric}`;
        line("numeric", `numeric-approximate answers (n=${n}): paper's mean 1/(1+RAE)`, G.map((g) => fl[g].numeric_paper));
        line("numeric", "… constant 0 on them, paper's metric", G.map((g) => fl[g].numeric_zero_paper));
        line("numeric", "… within band (RAE < 11.1%)", G.map((g) => fl[g].numeric_band));
        for (const b of doc.rae_bands) line("numeric", `… RAE ≤ ${(Number(b) * 100).toFixed(0)}%`, G.map((g) => fl[g].numeric_rae[b]));
      }
    } else if (doc.floor_note) {
      tb.appendChild(h("tr", { class: "gl floor", "data-line": "floor-note" }, h("td", null, "floor"), h("td", { colspan: "2" }, doc.floor_note)));
    } else if (!doc.floors_apply) {
      tb.appendChild(h("tr", { class: "gl info" }, h("td", { colspan: "3", class: "muted" }, `no floors for ${doc.setting}: its scores are a judge's, not against gold answers`)));
    }
    const info = (label, text) => tb.appendChild(h("tr", { class: "gl info" }, h("td", null, label), h("td", { colspan: "2" }, text)));
    info("tasks scored differently by the two golds", int(sc.changed));
    const ef = doc.errata_file;
    info("errata file", ef ? `${ef.path} (sha256 ${String(ef.sha256 || "").slice(0, 12)})` : "none applied" + (doc.run_gold === "official" ? " (--no-errata run)" : ""));
    const cls = Object.entries(doc.classes || {});
    if (cls.length) info("tasks by reviewed class", cls.map(([k, n]) => `${k} ${n}`).join(" · "));
    return [
      h("table", { class: "grid golds", id: "golds-table" }, h("thead", null, h("tr", null, h("th", null, `${doc.setting}`),
        h("th", { class: "num" }, "Official gold (paper-comparable) %"), h("th", { class: "num" }, "Verified gold %"))), tb),
      doc.notes.map((n) => h("p", { class: "muted small" }, n)),
      h("p", { class: "muted small" }, "Official: the answers as the workload files hold them, as the paper scored (the paper-comparable number). " +
        "Verified: the official gold with the reviewed errata applied. Floors: what a constant answer gets on the same tasks, scored by the same " +
        "scorers without any model. Bounded: numeric-approximate answers score 1 within the paper's band, 0 otherwise; shown beside the paper's 1/(1+RAE), never instead."),
    ];
  }

  // the report's tables by domain and by difficulty, both golds, each cell with its interval
  function breakdownTables(doc, name) {
    const cell = (x) => h("td", { class: "num" }, h("b", null, pct(x.score)), " ", h("span", { class: "muted ci" }, ci(x.ci_low, x.ci_high)),
      h("div", { class: "small muted" }, `n=${int(x.n_scored)}` + (x.n_unscored ? ` +${x.n_unscored}u` : "")));
    const table = (rows, title, key, facet) => rows.length ? h("table", { class: "grid breakdown", id: "breakdown-" + key },
      h("thead", null, h("tr", null, h("th", null, title), h("th", { class: "num" }, "Verified % [95% CI]"), h("th", { class: "num" }, "Official % (paper-comparable)"), h("th", { class: "num" }, "Tasks"))),
      h("tbody", null, rows.map((r) => {
        const total = r.label === doc.total_label;
        const q = new URLSearchParams(); q.set("run", name); if (!total) q.set(facet, r.label);
        return h("tr", { class: total ? "total" : "", "data-label": r.label }, h("td", null, total ? h("b", null, r.label) : link(q, idText(r.label, 40))),
          cell(r.verified), cell(r.official), h("td", { class: "num" }, int(r.verified.tasks)));
      }))) : null;
    return [h("div", { class: "breakdown-tables" }, table(doc.domains, "Domain", "domain", "domain"), table(doc.difficulties, "Difficulty (from the task id)", "difficulty", "difficulty")),
      h("p", { class: "muted small" }, `${doc.setting}: mean task score in %, with a 95% bootstrap interval and the number of scored tasks (the report's tables). Total is the mean over all tasks of the run.`)];
  }

  function problemsBox(problems) {
    const real = problems.filter((x) => x.level !== "info");
    const info = problems.filter((x) => x.level === "info");
    const box = h("div", { class: "problems" });
    if (real.length) {
      const d = h("details", { class: "problem warn", open: real.length <= 3 ? true : null },
        h("summary", null, `${real.length} problem${real.length > 1 ? "s" : ""} with this run's files (the rest is shown)`),
        h("ul", null, real.map((x) => h("li", null, h("code", null, x.file + (x.line ? `:${x.line}` : "")), " ", x.message))));
      box.appendChild(d);
    }
    for (const x of info) box.appendChild(h("div", { class: "problem info" }, h("code", null, x.file + (x.line ? `:${x.line}` : "")), " ", x.message));
    return box;
  }

  function runView(p, seq) {
    const name = p.get("run");
    document.title = idText(name, 60) + " · kramabench view";
    setCrumbs(idSpan(name, 60));
    clear(main);
    const head = h("div", { id: "run-head" });
    const resume = h("div");
    const goldsBody = h("div", { class: "golds-body" }, h("p", { class: "muted" }, "computing the floors…"));
    const goldsLine = h("span", { class: "floors-line", id: "floors-line" }, h("span", { class: "muted" }, " computing…"));
    const golds = h("details", { class: "golds-panel", id: "golds" }, h("summary", null, h("b", null, "Floors"), " ", goldsLine), goldsBody);
    const bdBody = h("div", { class: "breakdown-body" }, h("p", { class: "muted" }, "computing…"));
    const bd = h("details", { class: "golds-panel", id: "breakdown" }, h("summary", null, h("b", null, "By domain and difficulty"),
      h("span", { class: "muted small" }, " — the report's tables, with intervals")), bdBody);
    const probs = h("div", { id: "run-problems" });
    const manifestPre = pre("");
    const manifest = h("details", { class: "manifest" }, h("summary", null, "Manifest"), manifestPre);
    const notes = h("div", { id: "notes" });
    const count = h("div", { id: "count", class: "muted" });
    const headTr = h("tr");
    const tb = h("tbody");
    const table = h("table", { class: "grid tasks" }, h("thead", null, headTr), tb);
    const empty = h("div", { class: "muted" });
    const pager = h("div", { id: "pager", class: "pager" });

    const search = searchBox("search", "Search task ids, questions, answers, code, transcripts…", p.get("q"), (v) => setParam("q", v, true));
    const minIn = numberBox("min", "min %", p.get("min"), (v) => setParam("min", v, true));
    const maxIn = numberBox("max", "max %", p.get("max"), (v) => setParam("max", v, true));
    const allAtt = h("input", { id: "attempts", type: "checkbox", checked: p.get("attempts") === "all" ? true : null });
    allAtt.addEventListener("change", () => setParam("attempts", allAtt.checked ? "all" : "", false));
    const facetBox = h("div", { id: "facets" });
    const filters = h("div", { id: "filters", class: "filters" }, h("div", { class: "filter-line" }, search,
      h("label", null, "score ", minIn, " – ", maxIn),
      h("label", null, allAtt, " all attempts"),
      h("a", { href: "#", id: "clear", onclick: (e) => { e.preventDefault(); const q = new URLSearchParams(); q.set("run", name); go(href(q)); } }, "clear filters")),
    facetBox);
    main.append(head, resume, golds, bd, probs, manifest, filters, notes, count, table, empty, pager);

    function setParam(k, v, replace) {
      const q = params();
      if (v === "" || v === null) q.delete(k); else q.set(k, v);
      if (k !== "page") q.delete("page");
      go(href(q), replace);
    }

    function facetChips(facets, ignored) {
      const cur = params();
      const lines = [];
      const left = new Set((ignored || []).map((x) => x.key + "=" + x.value));
      for (const [facet, counts] of Object.entries(facets)) {
        const keys = Object.keys(counts);
        const chosen = (cur.get(facet) || "").split(",").filter((x) => x && !left.has(facet + "=" + x) && !left.has(facet + "=" + cur.get(facet)));
        if (keys.length <= 1 && !chosen.length) continue;
        lines.push({ facet, chosen, values: [...new Set([...keys, ...chosen])].map((k) => ({ k, n: counts[k] || 0, on: chosen.includes(k) })) });
      }
      keyed(facetBox, lines, (x) => x.facet, (x) => h("div", { class: "facet", "data-facet": x.facet }, h("span", { class: "facet-name" }, FACET_LABELS[x.facet] || x.facet)), (line, x) => {
        keyed(line, [{ name: true }, ...x.values], (c) => c.name ? "#name" : "v:" + c.k, (c) => c.name ? line.firstChild :
          h("button", { type: "button", class: "chip", "data-value": c.k, title: x.facet === "step" ? `records with a step whose outcome is ${c.k}` : null, onclick: () => {
            const now = (params().get(x.facet) || "").split(",").filter((y) => y);
            setParam(x.facet, (now.includes(c.k) ? now.filter((y) => y !== c.k) : [...now, c.k]).join(","), false);
          } }, h("span", { class: "label" }), h("span", { class: "n" })), (el, c) => {
          if (c.name) return;
          el.className = "chip" + (c.on ? " on" : "") + (x.facet === "outcome" ? " oc-" + c.k : "") + (x.facet === "gold_class" ? " cls-" + c.k : "");
          el.setAttribute("aria-pressed", c.on ? "true" : "false");
          const label = x.facet === "step" ? (STEP_LABELS[c.k] || c.k) : x.facet === "benchmark" ? (BENCHMARK_LABELS[c.k] || c.k) : c.k;
          setText(el.firstChild, label ? idText(label, 40) : "(none)");
          setText(el.lastChild, int(c.n));
        });
      });
    }

    function rowCells(r, base, agents) {
      const q = new URLSearchParams(base); q.set("i", String(r.i)); q.delete("page");
      const goldTd = (g) => h("td", { class: "num gold-" + g + (r.gold_changed ? " changed" : ""),
        title: r.gold_changed ? "an erratum changed this item's gold: the two golds score it differently" : null },
      r[g] === null && r.outcome !== "error" ? h("span", { class: "muted" }, "unscored") : pct(r[g]));
      return [
        h("td", { class: "task-id" }, link(q, idSpan(r.task_id, 90)), r.subtask_id ? h("div", { class: "small muted" }, idSpan(r.subtask_id, 90)) : null,
          r.attempt ? h("span", { class: "small muted" }, ` #${r.attempt}`) : null,
          r.gold_class ? h("div", null, h("span", { class: "badge cls cls-" + r.gold_class }, r.gold_class)) : null,
          r.benchmark && r.benchmark.length ? h("div", null, h("span", { class: "badge warn unsupported", title: r.benchmark_why }, "benchmark cannot support")) : null),
        h("td", { title: r.domain.length > 24 ? r.domain : null }, idText(r.domain, 24), r.difficulty ? h("div", { class: "small muted" }, idText(r.difficulty, 24)) : null),
        h("td", { class: "small" }, idText(r.answer_type || "", 24)),
        h("td", null, outcomeBadge(r.outcome)),
        goldTd("verified"), goldTd("official"),
        h("td", { class: "small" }, idText(r.error_kind || "", 24)),
        agents ? h("td", { class: "small agent-end" }, r.agent_end || "",
          r.step_outcomes.length ? h("div", { class: "muted" }, r.step_outcomes.map((o) => STEP_LABELS[o] || o).join(", ")) : null) : null,
        h("td", { class: "val", title: r.answer }, r.answer), h("td", { class: "val", title: r.expected }, r.expected),
        h("td", { class: "num" }, r.steps === null ? "" : int(r.steps)),
        h("td", { class: "num" }, num(r.wall_s, 1)),
        h("td", { class: "num cost" }, costText(r, true)),
        h("td", { class: "num" }, r.tokens === null ? "" : int(r.tokens)),
      ];
    }

    function drawTable(doc, rq) {
      const cur = params();
      search.sync(cur.get("q")); minIn.sync(cur.get("min")); maxIn.sync(cur.get("max"));
      allAtt.checked = cur.get("attempts") === "all";
      const s = doc.summary;
      fill(head, JSON.stringify([s, doc.kept]), h("div", { class: "bar-line" }, h("h1", null, idSpan(name, 80)), h("span", { class: "muted" }, runTitle(s))), summaryLine(s, doc.kept));
      fill(resume, JSON.stringify([s.status, s.stop_reason, s.resume]), resumeBox(s));
      ignoredNote(notes, doc.ignored);
      facetChips(doc.facets, doc.ignored);
      const from = doc.total ? doc.offset + 1 : 0;
      const to = Math.min(doc.offset + doc.rows.length, doc.total);
      setText(count, `${int(doc.total)} matching of ${int(doc.all)} · showing ${int(from)}–${int(to)}`);
      count.setAttribute("data-total", String(doc.total));
      const agents = doc.summary.n_with_steps > 0;
      const sort = cur.get("sort") || "task";
      const cols = [{ label: "Task", key: "task" }, { label: "Domain", key: "domain" }, { label: "Type", key: "type" }, { label: "Outcome", key: "outcome" },
        { label: "Verified %", key: "verified", cls: "num" }, { label: "Official %", key: "official", cls: "num" }, { label: "Error", key: "error" }];
      if (agents) cols.push({ label: "Agent ended", key: "agent" });
      cols.push({ label: "Answer" }, { label: "Expected" }, { label: "Steps", key: "steps", cls: "num" }, { label: "Wall s", key: "wall", cls: "num" },
        { label: "Cost $", key: "cost", cls: "num" }, { label: "Tokens", key: "tokens", cls: "num" });
      headRow(headTr, cols, sort, (next) => setParam("sort", next === "task" ? "" : next, false));
      const base = params();
      keyed(tb, doc.rows, (r) => r.i, (r) => h("tr", { "data-task": r.task_id, "data-i": String(r.i) }), (tr, r) => {
        tr.className = "task oc-row-" + r.outcome + (r.latest ? "" : " superseded");
        const sig = JSON.stringify([r, agents, base.toString()]);
        if (tr._sig === sig) return;
        tr._sig = sig;
        clear(tr);
        add(tr, rowCells(r, base, agents));
      });
      setText(empty, doc.rows.length ? "" : doc.all ? "No task matches this filter." : "No records yet.");
      const page = Math.floor(doc.offset / PAGE) + 1;
      const pages = Math.max(1, Math.ceil(doc.total / PAGE));
      const at = (n) => { const q = params(); if (n > 1) q.set("page", String(n)); else q.delete("page"); return q; };
      fill(pager, `${page}/${pages}/${base.toString()}`, pages > 1 ? [page > 1 ? link(at(page - 1), "‹ previous") : h("span", { class: "muted" }, "‹ previous"),
        ` page ${page} of ${pages} `, page < pages ? link(at(page + 1), "next ›") : h("span", { class: "muted" }, "next ›")] : null);
      count.setAttribute("data-query", rq.toString());  // what the table shows (tests wait for it)
    }

    // a part of the run's page drawn from one document of the run's API, with the run version it shows
    function runPart(what, box, draw) {
      const part = { version: null };
      part.load = async () => {
        try {
          const d = await api(apiRun(name, what));
          if (!current(seq)) return;
          part.version = d.version;
          draw(d);
        } catch (e) { if (current(seq)) { clear(box); box.appendChild(failure(e)); } }
      };
      return part;
    }
    const goldsPart = runPart("golds", goldsBody, (g) => {
      fill(goldsBody, JSON.stringify(g), floorsTable(g));
      fill(goldsLine, JSON.stringify(g), floorsLine(g));
      goldsBody.setAttribute("data-version", String(g.version));
    });
    const bdPart = runPart("breakdown", bdBody, (d) => fill(bdBody, JSON.stringify(d), breakdownTables(d, name)));
    let runDoc = null;
    let loadSeq = 0;
    let firstDone = false;
    async function load(withRun) {
      const mine = ++loadSeq;
      const rq = rowQuery(params());
      let doc, r;
      try {
        [doc, r] = await Promise.all([api(apiRun(name, "rows"), rq), withRun || !runDoc ? api(apiRun(name)) : Promise.resolve(runDoc)]);
      } catch (e) {
        if (!current(seq) || mine !== loadSeq) return;
        if (!firstDone) { clear(main); main.appendChild(failure(e)); setView(seq, "run", name, { refresh: (ev) => { if (ev.runs[name]) { view = null; render(); } } }); }
        return;
      }
      if (!current(seq) || mine !== loadSeq) return;  // a later request (the next key typed) answers instead
      runDoc = r;
      drawTable(doc, rq);
      fill(probs, JSON.stringify(r.problems), problemsBox(r.problems));
      fill(manifestPre, JSON.stringify(r.manifest), r.manifest ? json(r.manifest) : "(no readable manifest)");
      if (!firstDone) { firstDone = true; goldsPart.load(); bdPart.load(); }
      return doc;
    }
    load(true);
    let version = null;
    setView(seq, "run", name, {
      update: () => load(false),
      refresh: async (ev) => {
        const v = ev.runs[name];
        if (!v || v.version === version) return;
        version = v.version;
        await load(true);
        if (goldsPart.version !== v.version) goldsPart.load();
        if (bdPart.version !== v.version) bdPart.load();
      },
    });
  }

  // ================= one task =================
  const KNOWN = new Set(["run_id", "setting", "domain", "task_id", "subtask_id", "attempt", "status", "system", "model",
    "answer_type", "expected", "answer", "score", "unscored", "metric", "score_details", "subtask_answers", "subtask_scores",
    "subtask_details", "pipeline_code", "error", "usage", "wall_s", "files_read", "iterations", "transcript", "started_at",
    "finished_at", "difficulty", "steps", "artifacts", "gold", "other_gold", "gold_class"]);

  function section(title, ...kids) {
    const id = "sec-" + title.toLowerCase().replace(/ \(.*$/, "").replace(/[^a-z]+/g, "-");
    return h("section", { class: "block", id }, h("h2", null, title), ...kids);
  }

  // ---- rendered texts (made by the viewer from data; built here from allowed tags and text nodes only) ----
  function hlCode(runs, cls) {
    const code = h("code", { class: "hl" });
    for (const [c, t] of runs) code.appendChild(c ? h("span", { class: c }, t) : document.createTextNode(safe(t)));
    return h("pre", { class: (cls || "") + " hl" }, code);
  }
  const MD_TAGS = new Set(["p", "h3", "h4", "h5", "h6", "em", "strong", "s", "code", "pre", "ul", "ol", "li", "blockquote", "hr", "br",
    "table", "thead", "tbody", "tr", "th", "td", "a"]);
  function mdNodes(nodes, parent) {
    for (const n of nodes || []) {
      if (typeof n === "string") { parent.appendChild(document.createTextNode(safe(n))); continue; }
      if (!n || !MD_TAGS.has(n.t)) continue;
      const el = document.createElement(n.t);
      const a = n.a || {};
      if (n.t === "a") {
        const url = String(a.href || "");
        if (!/^(https?:\/\/|mailto:)/i.test(url)) { mdNodes(n.c, parent); continue; }
        el.setAttribute("href", url); el.setAttribute("rel", "noopener noreferrer nofollow"); el.setAttribute("target", "_blank");
        el.setAttribute("title", safe(url, true));
      }
      if (n.t === "ol" && Number.isInteger(a.start)) el.setAttribute("start", String(a.start));
      if ((n.t === "th" || n.t === "td") && ["left", "right", "center"].includes(a.align)) el.className = "al-" + a.align;
      if (n.t === "code" && n.hl) { el.className = "hl"; for (const [c, t] of n.hl) el.appendChild(c ? h("span", { class: c }, t) : document.createTextNode(safe(t))); } else mdNodes(n.c, el);
      parent.appendChild(el);
    }
    return parent;
  }
  function mdBlock(tree) { return mdNodes(tree, h("div", { class: "md" })); }

  // a text field of a record: rendered (highlighted, Markdown) when the viewer made it so, cut where the record
  // is long (with "show all"), plain otherwise
  function textField(ctx, path, value, cls) {
    const cut = ctx.cuts[path];
    const r = ctx.render[path];
    const box = h("div", { class: "text-field", "data-path": path });
    let body;
    if (r && r.hl) body = hlCode(r.hl, cls);
    else if (r && r.md) body = mdBlock(r.md);
    else body = pre(typeof value === "string" ? value : json(value), cls);
    box.appendChild(body);
    if (r && r.md) {
      box.appendChild(h("button", { type: "button", class: "link-btn small as-text", onclick: (e) => {
        const showing = box.classList.toggle("plain");
        e.target.textContent = showing ? "as Markdown" : "as text";
        if (showing && !box._plain) { box._plain = pre(value, (cls || "") + " md-source"); box.insertBefore(box._plain, body.nextSibling); }
      } }, "as text"));
    }
    if (cut) box.appendChild(cutNote(ctx, path, cut, (whole) => {
      const fresh = pre(typeof whole === "string" ? whole : json(whole), cls);
      box.replaceChild(fresh, body); body = fresh;
    }));
    return box;
  }
  const INLINE_LIMIT = 2000000;
  function cutNote(ctx, path, cut, onWhole) {
    const what = cut.chars !== undefined ? `showing the first ${int(ctx.keptLen(path))} of ${int(cut.chars)} characters` : `showing the first ${int(ctx.keptLen(path))} of ${int(cut.items)} items`;
    const note = h("div", { class: "cut-note small muted", "data-cut": path }, what, " · ");
    const size = cut.chars !== undefined ? cut.chars : cut.items * 20;
    if (size <= INLINE_LIMIT) {
      note.appendChild(h("button", { type: "button", class: "link-btn show-all", onclick: async (e) => {
        e.target.disabled = true; setText(e.target, "loading…");
        try {
          const doc = await api(apiRun(ctx.run, "field"), new URLSearchParams({ i: String(ctx.i), path }));
          onWhole(doc.value); note.remove();
        } catch (err) { note.appendChild(failure(err)); }
      } }, "show all"));
    }
    const url = fieldTextUrl(ctx.run, ctx.i, path);
    if (url) { if (note.lastChild.tagName === "BUTTON") note.appendChild(document.createTextNode(" · ")); note.appendChild(h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "open whole as text")); }
    return note;
  }

  function kvTable(obj, ctx, base) {
    const tb = h("tbody");
    for (const [k, v] of Object.entries(obj)) {
      const multi = typeof v === "string" ? v.includes("\n") || v.length > 120 : v !== null && typeof v === "object";
      const path = base !== undefined ? base + "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1") : null;
      tb.appendChild(h("tr", null, h("th", null, idText(k, 60)), h("td", null, multi ? (ctx && path ? textField(ctx, path, v) : pre(json(v))) : (v === null ? "null" : String(v)))));
    }
    return h("table", { class: "kv" }, tb);
  }

  // one entry of a list of steps or transcript entries: a one-line summary, the fields below
  const SUMMARY_KEYS = ["kind", "type", "role", "step", "outcome", "iteration", "exit_code", "timed_out", "oom", "error", "wall_s", "latency_s", "tokens", "prompt_tokens", "completion_tokens", "finish_reason"];
  const TEXT_KEYS = ["thought", "text", "code", "observation", "content", "response", "reply", "stdout_tail", "stderr_tail", "prompt", "message", "explanation", "plan"];
  const FIELD_ORDER = ["thought", "plan", "code", "observation", "error", "response", "reply", "stdout_tail", "stderr_tail"];
  function stepList(items, label, ctx, base, calls) {
    const box = h("div", { class: "steps" });
    const details = [];
    items.forEach((it, n) => {
      const bits = [];
      let first = "";
      const obj = it && typeof it === "object" && !Array.isArray(it);
      if (obj) {
        for (const k of SUMMARY_KEYS) if (k in it && it[k] !== null && typeof it[k] !== "object" && !(k === "error" && String(it[k]).length > 40)) bits.push(`${k} ${typeof it[k] === "number" ? (Number.isInteger(it[k]) ? int(it[k]) : it[k].toFixed(2)) : it[k]}`);
        for (const k of TEXT_KEYS) if (typeof it[k] === "string" && it[k].trim()) { first = it[k].trim().split("\n")[0]; break; }
      } else first = typeof it === "string" ? it.split("\n")[0] : JSON.stringify(it);
      if (first.length > 140) first = first.slice(0, 139) + "…";
      const body = h("div", { class: "step-body" });
      const path = `/${base}/${n}`;
      const fillBody = () => {
        if (body._done) return;
        body._done = true;
        if (obj) {
          // short values on one line (times, flags), texts and objects as blocks; empty ones left out
          const small = [];
          const keys = [...FIELD_ORDER.filter((k) => k in it), ...Object.keys(it).filter((k) => !FIELD_ORDER.includes(k))];
          for (const k of keys) {
            const v = it[k];
            if (v === null || v === "" || v === false || (SUMMARY_KEYS.includes(k) && typeof v !== "object" && !(k === "error" && String(v).length > 40))) continue;
            if (v && typeof v === "object" && !Object.keys(v).length) continue;
            const short = typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= 60 && !v.includes("\n") && !TEXT_KEYS.includes(k) && k !== "error");
            if (short) { small.push(`${k} ${typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : v}`); continue; }
            const p = path + "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1");
            body.appendChild(h("div", { class: "field", "data-field": k }, h("div", { class: "field-name" }, k),
              textField(ctx, p, v, k === "code" ? "code" : "")));
          }
          if (small.length) body.appendChild(h("div", { class: "field small muted step-facts" }, small.join(" · ")));
        } else body.appendChild(pre(json(it)));
        if (calls && calls.forStep(n + 1)) body.appendChild(calls.button(n + 1));
      };
      const oc = obj && typeof it.outcome === "string" ? it.outcome : "";
      const d = h("details", { class: "step" + (oc ? " step-" + oc : ""), "data-outcome": oc || null, "data-n": String(n + 1) },
        h("summary", null, h("span", { class: "step-n" }, `${label} ${n + 1}`),
          bits.length ? h("span", { class: "step-bits" }, bits.join(" · ")) : null, first ? h("span", { class: "step-first" }, first) : null), body);
      d.addEventListener("toggle", () => { if (d.open) fillBody(); });
      d._fill = fillBody;
      details.push(d);
      box.appendChild(d);
    });
    const tools = h("div", { class: "step-tools" },
      h("button", { type: "button", class: "expand-all", onclick: () => details.forEach((d) => { d._fill(); d.open = true; }) }, "expand all"),
      h("button", { type: "button", class: "collapse-all", onclick: () => details.forEach((d) => { d.open = false; }) }, "collapse all"));
    return [tools, box];
  }

  // a task's timeline: per step the model's time, the code's time and the rest of the step, and its tokens
  function timeline(steps, open) {
    const rows = steps.map((s, n) => {
      const o = s && typeof s === "object" ? s : {};
      const model = typeof o.model_s === "number" ? o.model_s : 0;
      const code = typeof o.code_s === "number" ? o.code_s : 0;
      const wall = typeof o.wall_s === "number" ? Math.max(o.wall_s, model + code) : model + code;
      const tokens = (typeof o.prompt_tokens === "number" ? o.prompt_tokens : 0) + (typeof o.completion_tokens === "number" ? o.completion_tokens : 0);
      return { n: n + 1, model, code, other: Math.max(0, wall - model - code), wall, tokens, outcome: o.outcome || "" };
    });
    if (!rows.some((r) => r.wall > 0 || r.tokens > 0)) return null;
    const maxWall = Math.max(...rows.map((r) => r.wall), 1e-9);
    const maxTok = Math.max(...rows.map((r) => r.tokens), 1);
    const sum = (k) => rows.reduce((a, r) => a + r[k], 0);
    const seg = (cls, v, title) => { const e = h("span", { class: "seg " + cls, title }); e.style.width = (100 * v / maxWall).toFixed(2) + "%"; return e; };
    const box = h("div", { class: "timeline", id: "timeline" },
      h("div", { class: "tl-legend small" }, h("span", { class: "key model" }), ` model ${secs(sum("model"))} `, h("span", { class: "key code" }), ` code ${secs(sum("code"))} `,
        h("span", { class: "key other" }), ` rest of the steps ${secs(sum("other"))} · `, h("span", { class: "key tok" }), ` ${int(sum("tokens"))} tokens (prompt + completion)`));
    for (const r of rows) {
      const tok = h("span", { class: "seg tok", title: `${int(r.tokens)} tokens` }); tok.style.width = (100 * r.tokens / maxTok).toFixed(2) + "%";
      box.appendChild(h("div", { class: "tl-row step-" + r.outcome, "data-step": String(r.n), tabindex: "0", role: "button",
        title: `step ${r.n}: model ${secs(r.model)}, code ${secs(r.code)}, whole step ${secs(r.wall)}, ${int(r.tokens)} tokens`,
        onclick: () => open(r.n), onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(r.n); } } },
      h("span", { class: "tl-n" }, String(r.n)),
      h("span", { class: "tl-time" }, seg("model", r.model, `model ${secs(r.model)}`), seg("code", r.code, `code ${secs(r.code)}`), seg("other", r.other, `rest ${secs(r.other)}`)),
      h("span", { class: "tl-secs small muted" }, secs(r.wall)),
      h("span", { class: "tl-tok" }, tok), h("span", { class: "tl-toks small muted" }, int(r.tokens))));
    }
    return box;
  }

  // the model calls of a record (calls.jsonl): each step's call one click away, the whole request and reply
  function callsPanel(name, i, onLoad) {
    let doc = null;
    const waiting = [];
    const loaded = api(apiRun(name, "calls"), new URLSearchParams({ i: String(i) }));
    const panel = {
      doc: () => doc,
      forStep: (n) => !doc || doc.steps.some((s) => s.step === n && s.call !== null),
      button: (n) => {
        const box = h("div", { class: "call-box" });
        const btn = h("button", { type: "button", class: "show-call", "data-step": String(n), onclick: async () => {
          if (box._open) { box._open = false; clear(box); box.appendChild(btn); return; }
          box._open = true;
          if (!doc) {  // clicked before the calls came: wait for them, never say "no call" too early
            const note = h("div", { class: "muted small" }, "loading the calls…");
            box.appendChild(note);
            await loaded.catch(() => null);
            note.remove();
            if (!box._open) return;
          }
          const st = doc && doc.steps.find((s) => s.step === n);
          if (!st || st.call === null) { box.appendChild(h("div", { class: "muted small" }, "no recorded call for this step")); return; }
          box.appendChild(callView(name, i, "solve", st.call, st.matched));
        } }, "model call: request and reply");
        box.appendChild(btn);
        if (!doc) waiting.push(() => { if (!panel.forStep(n)) btn.remove(); });
        return box;
      },
    };
    loaded.then((d) => { doc = d; waiting.forEach((f) => f()); onLoad(d); }).catch((e) => onLoad(null, e));
    return panel;
  }
  function callView(name, i, kind, index, matched) {
    const box = h("div", { class: "call", "data-call": String(index) }, h("p", { class: "muted small" }, "loading the call…"));
    api(apiRun(name, "call"), new URLSearchParams({ i: String(i), index: String(index), kind })).then((d) => {
      clear(box);
      const c = d.call || {};
      const usage = c.usage || {};
      box.appendChild(h("div", { class: "small muted call-facts" }, [`${kind} call ${index}`, matched === "position" ? "(matched by position: step n, call n − 1)" : "",
        c.model_id, c.latency_s !== undefined ? secs(c.latency_s) : "", `${int(usage.prompt_tokens)} prompt + ${int(usage.completion_tokens)} completion tokens`,
        c.finish_reason ? "finish " + c.finish_reason : "", c.cached ? "from the cache" : "", c.attempts > 1 ? `${c.attempts} attempts` : "",
        c.started_at ? when(c.started_at) : ""].filter((x) => x).join(" · ")));
      if (d.note) box.appendChild(h("div", { class: "problem warn" }, d.note));
      const msgs = Array.isArray(c.messages) ? c.messages : [];
      box.appendChild(h("div", { class: "field-name" }, `request: ${plural(msgs.length, "message")}`));
      msgs.forEach((m, k) => {
        const path = `/messages/${k}/content`;
        const cut = d.cuts[path];
        box.appendChild(h("details", { class: "msg msg-" + (m.role || ""), open: k === msgs.length - 1 ? true : null },
          h("summary", null, h("b", null, m.role || "?"), h("span", { class: "muted small" }, ` ${int((m.content || "").length)} characters` + (cut ? ` (of ${int(cut.chars)})` : ""))),
          pre(m.content || "", "msg-text")));
      });
      box.appendChild(h("div", { class: "field-name" }, "reply"));
      box.appendChild(pre(c.text === null || c.text === undefined ? "(no reply)" : c.text, "reply-text"));
      if (d.cuts["/text"]) box.appendChild(h("div", { class: "small muted" }, `showing the first ${int((c.text || "").length)} of ${int(d.cuts["/text"].chars)} characters`));
      if (c.error) box.appendChild(h("div", { class: "problem warn" }, `${c.error.kind}: ${c.error.message}`));
    }).catch((e) => { clear(box); box.appendChild(failure(e)); });
    return box;
  }

  // a DuckDB or SQLite file: its tables with row counts and first rows; its views by name and definition (never run)
  function databasePreview(p) {
    const box = h("div", { class: "database", "data-engine": p.engine });
    const nViews = p.views.length;
    box.appendChild(h("div", { class: "muted small" }, `${p.engine === "duckdb" ? "DuckDB" : "SQLite"} database, opened read-only` +
      (p.engine === "duckdb" ? " with external access disabled" : "") + `: ${p.tables.length} table${p.tables.length === 1 ? "" : "s"}` +
      (nViews ? `, ${nViews} view${nViews === 1 ? "" : "s"} (listed, not run)` : "")));
    if (!p.tables.length && !nViews) box.appendChild(h("p", { class: "muted" }, "no tables"));
    for (const t of p.tables) {
      const title = (t.schema && t.schema !== "main" ? t.schema + "." : "") + t.name;
      const d = h("details", { class: "db-table", "data-table": title, open: p.tables.length <= 3 ? true : null },
        h("summary", null, h("b", null, title), " ", h("span", { class: "muted small" },
          (t.rows === null || t.rows === undefined ? "" : `${t.rows.toLocaleString("en-US")} row${t.rows === 1 ? "" : "s"} · `) +
          plural(t.columns.length, "column") + (t.columns_cut ? " (more not shown)" : "") + (t.generated && t.generated.length ? ` · generated, not shown: ${t.generated.join(", ")}` : "") +
          (t.note ? " · " + t.note : ""))));
      if (t.first_rows) {
        d.appendChild(h("div", { class: "scroll-x" }, h("table", { class: "grid preview" },
          h("thead", null, h("tr", null, t.columns.map((c, k) => h("th", { title: t.types[k] || "" }, c)))),
          h("tbody", null, t.first_rows.map((r) => h("tr", null, r.map((c) => h("td", { class: c === null ? "null" : "" }, c === null ? "NULL" : c))))))));
        if (t.rows > t.first_rows.length) d.appendChild(h("div", { class: "muted small" }, `first ${t.first_rows.length} of ${t.rows.toLocaleString("en-US")} rows`));
      } else if (t.columns.length) d.appendChild(h("div", { class: "muted small" }, "columns: " + t.columns.join(", ")));
      box.appendChild(d);
    }
    if (p.tables.length > p.tables_previewed) box.appendChild(h("p", { class: "muted small" }, `rows shown for the first ${p.tables_previewed} tables`));
    for (const v of p.views) box.appendChild(h("details", { class: "db-view" }, h("summary", null, "view ", h("b", null, (v.schema && v.schema !== "main" ? v.schema + "." : "") + v.name)), pre(v.sql || "")));
    return box;
  }

  function artifactBlock(runName, list) {
    const box = h("div", { class: "artifacts" });
    for (const a of list) {
      if (!a || typeof a !== "object") { box.appendChild(pre(json(a))); continue; }
      const path = typeof a.path === "string" ? a.path : null;
      const url = path ? artifactUrl(runName, path) : null;
      const mt = String(a.media_type || "");
      const prev = h("div", { class: "artifact-preview" });
      const item = h("div", { class: "artifact", "data-name": String(a.name || path || "") },
        h("div", { class: "artifact-head" }, h("b", { class: "wrap-any" }, String(a.name || path || "(unnamed)")), " ",
          h("span", { class: "muted small" }, [mt, bytes(a.bytes), a.sha256 ? "sha256 " + String(a.sha256).slice(0, 12) : ""].filter((x) => x).join(" · ")), " ",
          url ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "open") : null),
        prev);
      box.appendChild(item);
      if (!url) continue;
      if (/^image\//.test(mt) || /\.(png|jpe?g|gif|webp|svg)$/i.test(path)) {
        const src = LOCAL ? LOCAL.imageUrl(runName, path) : url;
        if (src) prev.appendChild(h("img", { src, alt: String(a.name || path), loading: "lazy" }));
      } else {
        api(apiRun(runName, "preview"), new URLSearchParams({ path })).then((p) => {
          if (p.kind === "table") {
            prev.appendChild(h("div", { class: "scroll-x" }, h("table", { class: "grid preview" },
              h("thead", null, h("tr", null, p.columns.map((c) => h("th", null, c)))),
              h("tbody", null, p.rows.map((r) => h("tr", null, r.map((c) => h("td", null, c))))))));
            if (p.more) prev.appendChild(h("div", { class: "muted small" }, `first ${p.rows.length} rows` + (p.total_rows ? ` of ${int(p.total_rows)}` : "")));
          } else if (p.kind === "database") prev.appendChild(databasePreview(p));
          else if (p.kind === "text") prev.appendChild(pre(p.text + (p.more ? "\n…" : "")));
          else if (p.kind === "error") prev.appendChild(h("div", { class: "problem warn" }, p.message));
          else if (p.kind === "image") prev.appendChild(h("img", { src: url, alt: String(a.name || path) }));
        }).catch((e) => prev.appendChild(h("div", { class: "problem warn" }, String(e.message || e))));
      }
    }
    return box;
  }

  // both golds of a record: expected value, answer type and score under each, its reviewed class
  function goldsBlock(g) {
    const tb = h("tbody");
    for (const name of ["verified", "official"]) {
      const x = g.golds[name];
      if (!x) continue;
      const own = g.run_gold === name;
      const source = { recorded: "", same: "no erratum changes this item: as the other gold", rescored: "scored again here against the official gold (the record predates both golds; no judge)" }[x.source] || "";
      tb.appendChild(h("tr", { class: "gold-row", "data-gold": name },
        h("th", null, GOLD_NAMES[name], own ? h("div", { class: "small muted" }, "the run's gold") : null),
        h("td", { class: "val-wrap" }, pre(x.expected === undefined || x.expected === null ? "(none)" : json(x.expected), "expected")),
        h("td", { class: "small" }, x.answer_type || ""),
        h("td", { class: "num" }, x.unscored ? h("span", { class: "muted" }, "unscored") : pct(x.value !== null && x.value !== undefined ? x.value : x.score)),
        h("td", { class: "small" }, x.metric || ""),
        h("td", { class: "small muted" }, [source, ...(x.notes || [])].filter((t) => t).join("; "))));
    }
    const out = [];
    out.push(h("p", { class: "gold-class" }, "Reviewed class: ",
      g.gold_class ? h("span", { class: "badge cls cls-" + g.gold_class }, g.gold_class) : h("span", { class: "muted" }, "not classified")));
    out.push(h("table", { class: "grid golds-of-task" }, h("thead", null, h("tr", null,
      ["Gold", "Expected", "Answer type", "Score %", "Metric", ""].map((x) => h("th", null, x)))), tb));
    if (g.note) out.push(h("p", { class: "problem warn" }, g.note));
    return out;
  }

  // previous / next task of the table this task was opened from (its filter and sort, from the URL)
  async function taskNav(box, p, name, i, seq) {
    const q = new URLSearchParams();
    for (const k of ROW_FILTERS) { const v = p.get(k); if (k !== "page" && v !== null && v !== "") q.set(k, v); }
    q.set("i", String(i));
    let nav;
    try { nav = await api(apiRun(name, "nav"), q); } catch (e) { return; }
    if (!current(seq)) return;
    const to = (t) => {
      const x = new URLSearchParams(p); x.set("i", String(t.i));
      const page = Math.floor((t.position - 1) / PAGE) + 1;
      if (page > 1) x.set("page", String(page)); else x.delete("page");
      return x;
    };
    const label = (t) => idText(t.task_id + (t.subtask_id ? " / " + t.subtask_id : ""), 60);
    clear(box);
    if (nav.position === null) {
      add(box, [h("span", { class: "muted" }, `this task is not among the ${nav.total} the table's filter keeps`),
        nav.first ? [" · ", link(to(nav.first), "first of them ›")] : null]);
      return;
    }
    const prev = nav.prev ? link(to(nav.prev), "‹ ", label(nav.prev)) : h("span", { class: "muted" }, "‹ first");
    const next = nav.next ? link(to(nav.next), label(nav.next), " ›") : h("span", { class: "muted" }, "last ›");
    prev.id = "prev-task"; next.id = "next-task";
    add(box, [prev, h("span", { class: "muted pos" }, ` task ${nav.position} of ${nav.total} `), next]);
    box.setAttribute("data-position", String(nav.position));
    keyNav = { prev: nav.prev ? href(to(nav.prev)) : null, next: nav.next ? href(to(nav.next)) : null, seq };
  }
  let keyNav = null;
  document.addEventListener("keydown", (e) => {
    if (!keyNav || keyNav.seq !== renderSeq || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    const url = e.key === "ArrowLeft" || e.key === "k" ? keyNav.prev : e.key === "ArrowRight" || e.key === "j" ? keyNav.next : null;
    if (url) { e.preventDefault(); go(url); }
  });

  async function taskView(p, seq) {
    const name = p.get("run");
    const i = p.get("i");
    let doc;
    try { doc = await api(apiRun(name, "record"), new URLSearchParams({ i })); } catch (e) { if (current(seq)) { clear(main); main.appendChild(failure(e)); } return; }
    if (!current(seq)) return;
    const back = new URLSearchParams(p); back.delete("i");
    setCrumbs(link(back, idSpan(name, 50)), idSpan(doc.row.task_id, 60));
    document.title = idText(doc.row.task_id, 60) + " · " + idText(name, 40);
    clear(main);
    const r = doc.row;
    const rec = doc.record || {};
    const ctx = { run: name, i, cuts: doc.cuts || {}, render: doc.render || {}, keptLen: (path) => {
      try { let x = rec; for (const part of path.split("/").slice(1)) x = x[part.replace(/~1/g, "/").replace(/~0/g, "~")]; return typeof x === "string" || Array.isArray(x) ? x.length : 0; } catch (e) { return 0; }
    } };
    const nav = h("div", { class: "task-nav", id: "task-nav" });
    main.appendChild(nav);
    taskNav(nav, p, name, i, seq);
    const other = r.gold === "verified" ? "official" : "verified";
    main.appendChild(h("div", { class: "bar-line" }, h("h1", { id: "task-title", class: "wrap-any", title: r.task_id }, idText(r.task_id, 200), r.subtask_id ? " / " + idText(r.subtask_id, 120) : ""),
      outcomeBadge(r.outcome), h("span", { class: "big" }, pct(r.value), "%"), h("span", { class: "muted small" }, `${r.gold} gold`),
      r.gold_changed ? h("span", { class: "muted" }, `${other} ${r[other] === null ? "unscored" : pct(r[other]) + "%"}`) : null,
      h("span", { class: "muted" }, [r.domain, r.difficulty, r.answer_type, r.setting, r.attempt ? "attempt " + r.attempt : ""].filter((x) => x).join(" · "))));
    if (doc.problem) main.appendChild(h("div", { class: "problem warn" }, doc.problem));
    const cutN = Object.keys(ctx.cuts).length;
    if (cutN) main.appendChild(h("div", { class: "problem info cut-summary" }, `A big record: ${plural(cutN, "value")} shown in part (each says where, with “show all”)` +
      (rawUrl(name, i) ? "; the whole record: " : "."), rawUrl(name, i) ? h("a", { href: rawUrl(name, i), target: "_blank", rel: "noopener noreferrer" }, "records.jsonl line " + r.line) : null));
    if (doc.attempts.length > 1) {
      main.appendChild(h("div", { class: "attempts" }, "Attempts: ", doc.attempts.map((a) => {
        const q = new URLSearchParams(p); q.set("i", String(a.i));
        const label = `#${a.attempt} ${a.outcome}${a.latest ? " (counted)" : ""}`;
        return String(a.i) === String(i) ? h("b", null, label, " ") : [link(q, label), " "];
      })));
    }
    main.appendChild(section("Question", doc.question ? pre(doc.question, "question") : h("p", { class: "muted question-note" }, doc.questions_note || "no question recorded")));
    main.appendChild(h("div", { class: "two" },
      section("Answer", rec.answer === undefined ? pre("(none)", "answer") : textField(ctx, "/answer", rec.answer, "answer")),
      section("Expected", rec.expected === undefined ? pre("(none)", "expected") : textField(ctx, "/expected", rec.expected, "expected"))));
    if (doc.golds) main.appendChild(section("Golds", ...goldsBlock(doc.golds)));

    const scoring = { metric: rec.metric, score: rec.score, unscored: rec.unscored };
    for (const [k, v] of Object.entries(rec)) if (!KNOWN.has(k) && /score|floor|verified|official/i.test(k)) scoring[k] = v;
    const scoreBox = [kvTable(scoring, ctx, "")];
    if (rec.score_details && typeof rec.score_details === "object" && Object.keys(rec.score_details).length) scoreBox.push(h("h3", null, "Details"), kvTable(rec.score_details, ctx, "/score_details"));
    main.appendChild(section("Scoring", ...scoreBox));
    if (rec.error) main.appendChild(section("Error", typeof rec.error === "object" ? [h("p", null, h("b", null, String(rec.error.kind || "error"))),
      textField(ctx, "/error/message", String(rec.error.message || json(rec.error)), "error-text")] : pre(json(rec.error))));

    const subIds = new Set([...Object.keys(rec.subtask_answers || {}), ...Object.keys(rec.subtask_scores || {}), ...Object.keys(rec.subtask_details || {}), ...Object.keys(doc.subtask_questions || {})]);
    if (subIds.size) {
      const tb = h("tbody");
      for (const id of subIds) {
        const det = (rec.subtask_details || {})[id] || {};
        const rest = Object.assign({}, det); delete rest.expected;
        const sc = (rec.subtask_scores || {})[id];
        tb.appendChild(h("tr", null, h("td", { class: "task-id" }, idSpan(id, 60)), h("td", { class: "wrap" }, (doc.subtask_questions || {})[id] || ""),
          h("td", { class: "val" }, id in (rec.subtask_answers || {}) ? json(rec.subtask_answers[id]) : "–"),
          h("td", { class: "val" }, "expected" in det ? json(det.expected) : ""),
          h("td", { class: "num" }, sc === undefined ? "" : pct(sc)),
          h("td", { class: "small wrap-any" }, Object.keys(rest).length ? JSON.stringify(rest) : "")));
      }
      main.appendChild(section("Subtasks", h("table", { class: "grid subtasks" },
        h("thead", null, h("tr", null, ["Subtask", "Question", "Answer", "Expected", "Score %", "Details"].map((x) => h("th", null, x)))), tb)));
    }
    if (rec.pipeline_code) main.appendChild(section("Code", textField(ctx, "/pipeline_code", rec.pipeline_code, "code")));
    let calls = null;
    const callsNote = h("div", { class: "muted small calls-note" });
    if (doc.calls && (Array.isArray(rec.steps) && rec.steps.length || Array.isArray(rec.transcript) && rec.transcript.length)) {
      calls = callsPanel(name, i, (d, err) => {
        if (err) setText(callsNote, "model calls: " + (err.message || err));
        else if (d.note) setText(callsNote, "model calls: " + d.note);
        else setText(callsNote, `${plural(d.calls.length, "model call")} of this task in calls.jsonl` + (d.calls.some((c) => c.kind === "judge") ? " (a judge's among them)" : "") + "; each step's is under the step");
        if (d && !rec.steps) callList(d);
      });
    }
    function callList(d) {
      const list = h("div", { class: "call-list" });
      for (const c of d.calls) {
        const box = h("div", { class: "call-box" });
        const btn = h("button", { type: "button", class: "show-call", onclick: () => {
          if (box._open) { box._open = false; clear(box); box.appendChild(btn); return; }
          box._open = true; box.appendChild(callView(name, i, c.kind, c.index, null));
        } }, `${c.kind} call ${c.index}: ${int(c.prompt_tokens)} + ${int(c.completion_tokens)} tokens, ${secs(c.latency_s)}` + (c.error ? " · " + c.error : ""));
        box.appendChild(btn); list.appendChild(box);
      }
      callsSection.appendChild(list);
    }
    const callsSection = section("Model calls", callsNote);
    if (Array.isArray(rec.steps) && rec.steps.length) {
      const facts = [r.agent_end ? `ended: ${r.agent_end}` : "", r.format_errors ? plural(r.format_errors, "reply", "replies") + " without code" : "",
        r.step_timeouts ? plural(r.step_timeouts, "step") + " timed out" : ""].filter((x) => x).join(" · ");
      const stepsCut = ctx.cuts["/steps"];
      const [tools, list] = stepList(rec.steps, "step", ctx, "steps", calls);
      const open = (n) => { const d = list.querySelector(`details.step[data-n="${n}"]`); if (d) { d._fill(); d.open = true; d.scrollIntoView({ block: "start" }); } };
      const tl = timeline(rec.steps, open);
      main.appendChild(section(`Steps (${rec.steps.length})`, facts ? h("p", { class: "muted agent-facts" }, facts) : null,
        stepsCut ? h("p", { class: "problem info" }, `the first ${rec.steps.length} of ${int(stepsCut.items)} steps`) : null,
        tl ? h("details", { class: "timeline-box", open: true }, h("summary", null, h("b", null, "Timeline"), h("span", { class: "muted small" }, " — model time, code time and tokens per step (click a step to open it)")), tl) : null,
        calls ? callsNote : null, tools, list));
    }
    if (Array.isArray(rec.transcript) && rec.transcript.length) main.appendChild(section(`Transcript (${rec.transcript.length} entries)`, ...stepList(rec.transcript, "#", ctx, "transcript", null)));
    if (calls && !(Array.isArray(rec.steps) && rec.steps.length)) main.appendChild(callsSection);
    if (Array.isArray(rec.artifacts) && rec.artifacts.length) main.appendChild(section(`Artifacts (${rec.artifacts.length})`, artifactBlock(name, rec.artifacts)));
    const timing = {};
    for (const k of ["wall_s", "started_at", "finished_at", "iterations", "system", "model", "run_id"]) if (k in rec) timing[k] = rec[k];
    if (rec.usage && typeof rec.usage === "object") for (const [k, v] of Object.entries(rec.usage)) timing["usage." + k] = typeof v === "number" && Number.isInteger(v) ? int(v) : v;
    if (Array.isArray(rec.files_read)) timing.files_read = rec.files_read.join("\n");
    main.appendChild(section("Run details", kvTable(timing)));
    const others = {};
    for (const [k, v] of Object.entries(rec)) if (!KNOWN.has(k) && !(k in scoring)) others[k] = v;
    if (Object.keys(others).length) main.appendChild(section("Other fields", kvTable(others, ctx, "")));
    main.appendChild(h("details", { class: "raw" }, h("summary", null, "The record as JSON" + (cutN ? " (long values cut)" : "")), pre(json(rec)),
      rawUrl(name, i) ? h("a", { href: rawUrl(name, i), target: "_blank", rel: "noopener noreferrer", class: "small" }, "the whole line of records.jsonl") : null));
    setView(seq, "task", name + "|" + i, {});
  }

  // ================= comparison =================
  function compareView(p, seq) {
    const runs = (p.get("compare") || "").split(",").filter((x) => x);
    document.title = "compare · kramabench view";
    setCrumbs(h("span", null, "compare " + runs.length + " runs"));
    clear(main);
    const title = h("h1");
    const sumHead = h("tr");
    const sb = h("tbody");
    const summaryTable = h("table", { class: "grid cmp-summary no-sticky" }, h("thead", null, sumHead), sb);
    const explain = h("p", { class: "muted small" });
    const search = searchBox("search", "Search tasks…", p.get("q"), (v) => setParam("q", v, true));
    const only = h("select", { id: "only", "aria-label": "which tasks" }, ["all", "differ", "same"].map((o) => h("option", { value: o }, o === "all" ? "all tasks" : o === "differ" ? "where they differ" : "where they agree")));
    only.addEventListener("change", () => setParam("only", only.value === "all" ? "" : only.value, false));
    const goldSel = h("select", { id: "gold", "aria-label": "the gold of the cells" }, ["verified", "official"].map((g) => h("option", { value: g }, `cells: ${GOLD_NAMES[g]} gold`)));
    goldSel.addEventListener("change", () => setParam("gold", goldSel.value, false));
    const domBox = h("div", { class: "facet", "data-facet": "domain" }, h("span", { class: "facet-name" }, "Domain"));
    const notes = h("div");
    const count = h("div", { id: "count", class: "muted" });
    const headTr = h("tr");
    const tb = h("tbody");
    const pager = h("div", { class: "pager" });
    const filters = h("div", { class: "filters" }, h("div", { class: "filter-line" }, search, only, goldSel), domBox);
    main.append(title, summaryTable, explain, filters, notes, count, h("table", { class: "grid compare" }, h("thead", null, headTr), tb), pager);
    let built = false;
    function setParam(k, v, replace) { const n = params(); if (v) n.set(k, v); else n.delete(k); n.delete("page"); go(href(n), replace); }

    function draw(doc, cur) {
      built = true;
      search.sync(cur.get("q"));
      only.value = cur.get("only") || "all";
      goldSel.value = doc.gold;
      setText(title, `Comparing ${doc.runs.length} runs on ${plural(doc.n_tasks, "task")}`);
      title.appendChild(h("span", { class: "muted" }, ` · ${doc.setting} · ${doc.n_differ} differ (${doc.gold} gold)`));
      const delta = (pair, cls) => pair ? [h("td", { class: "num " + cls }, pair.mean_diff === null ? "–" : (pair.mean_diff >= 0 ? "+" : "") + pct(pair.mean_diff) + " pp"),
        h("td", { class: "num muted small ci" }, pair.ci_low === null ? "" : `[${pct(pair.ci_low)}, ${pct(pair.ci_high)}]`)] : [h("td", { class: "muted baseline" }, "baseline"), h("td")];
      fill(sumHead, "h", ["Run", "System · model", "Verified % [95% CI]", "Official % (paper-comparable)", "Tasks", "Δ verified", "[95% CI]", "Δ official", "[95% CI]",
        "p", "better / tie / worse", "paired", ""].map((x) => h("th", { scope: "col" }, x)));
      keyed(sb, doc.runs.map((s, k) => ({ s, k })), (x) => x.s.run + "#" + x.k, () => h("tr", { class: "cmp-run" }), (tr, { s, k }) => {
        const pair = k ? doc.pairs[k - 1] : null;
        const pv = k ? doc.pairs_by_gold.verified[k - 1] : null, po = k ? doc.pairs_by_gold.official[k - 1] : null;
        const rq = new URLSearchParams(); rq.set("run", s.run);
        fill(tr, JSON.stringify([s, pair, pv, po]), h("td", { class: "run-id" }, link(rq, idSpan(s.run, 50))), h("td", { class: "wrap-any" }, runTitle(s)),
          goldCell(s, "verified"), goldCell(s, "official"),
          h("td", { class: "num" }, int(s.done)),
          delta(pv, "diff diff-verified"), delta(po, "diff diff-official"),
          pair ? h("td", { class: "num p-value" }, pText(pair.p_value)) : h("td"),
          pair ? h("td", { class: "num" }, `${pair.wins_a} / ${pair.ties} / ${pair.wins_b}`) : h("td"),
          pair ? h("td", { class: "num" }, int(pair.n_common)) : h("td"),
          pair ? h("td", { class: "small" }, [pair.only_in_a.length ? `${pair.only_in_a.length} only here` : "", pair.only_in_b.length ? `${pair.only_in_b.length} only in baseline` : "",
            pair.unscored_in_a.length + pair.unscored_in_b.length ? `${pair.unscored_in_a.length + pair.unscored_in_b.length} unscored` : ""].filter((x) => x).join(", ")) : h("td"));
      });
      setText(explain, `Δ: mean over the tasks scored in both runs of (this run − the first run), in percentage points, against the verified gold (official + errata) and the official gold (the paper-comparable number); its interval is the paired bootstrap of kramabench.scorers.stats (10,000 resamples). p (two-sided, paired bootstrap), better / tie / worse and paired tasks: against the ${doc.gold} gold.`);
      const doms = (cur.get("domain") || "").split(",").filter((x) => x);
      keyed(domBox, [{ name: true }, ...doc.domains.map((d) => ({ d }))], (x) => x.name ? "#name" : "v:" + x.d, (x) => x.name ? domBox.firstChild :
        h("button", { type: "button", class: "chip", "data-value": x.d, onclick: () => {
          const now = (params().get("domain") || "").split(",").filter((y) => y);
          setParam("domain", (now.includes(x.d) ? now.filter((y) => y !== x.d) : [...now, x.d]).join(","), false);
        } }, idText(x.d, 40)), (el, x) => { if (x.name) return; el.className = "chip" + (doms.includes(x.d) ? " on" : ""); el.setAttribute("aria-pressed", doms.includes(x.d) ? "true" : "false"); });
      ignoredNote(notes, doc.ignored);
      setText(count, `${int(doc.total)} tasks shown (the ones that differ first)`);
      count.setAttribute("data-total", String(doc.total));
      count.setAttribute("data-query", cur.toString());
      const withSteps = doc.runs.length >= 2;
      fill(headTr, JSON.stringify(doc.runs.map((s) => s.run)), h("th", null, "Task"), h("th", null, "Domain"), h("th", null, "Type"),
        doc.runs.map((s, k) => h("th", { class: "num run-col", title: s.run + (k ? "" : " (baseline)") }, idText(s.run, 28))), h("th", { class: "num" }, "spread"), withSteps ? h("th", null, "steps") : null);
      keyed(tb, doc.rows, (row) => `${row.domain}\u0000${row.task_id}\u0000${row.subtask_id || ""}`, (row) => h("tr", { "data-task": row.task_id }), (tr, row) => {
        tr.className = "cmp-row" + (row.differ ? " differ" : "");
        fill(tr, JSON.stringify([row, doc.gold]), h("td", { class: "task-id" }, idSpan(row.task_id, 80), row.subtask_id ? h("div", { class: "small muted" }, idSpan(row.subtask_id, 80)) : null),
          h("td", null, idText(row.domain, 24)), h("td", { class: "small" }, idText(row.answer_type || "", 24)),
          row.cells.map((c, k) => {
            if (!c.present) return h("td", { class: "num muted" }, "—");
            const lq = new URLSearchParams(); lq.set("run", doc.runs[k].run); lq.set("i", String(c.i));
            const other = doc.gold === "verified" ? "official" : "verified";
            const tip = (c.answer || "") + (c.gold_changed ? `\n${other} gold: ${c[other] === null ? "unscored" : pct(c[other])}%` : "");
            return h("td", { class: "num cell oc-" + c.outcome + (c.gold_changed ? " changed" : ""), title: tip }, link(lq, c.outcome === "error" ? (c.error_kind || "error") : c.outcome === "unscored" ? "unscored" : pct(c.value)));
          }),
          h("td", { class: "num" }, row.differ ? pct(row.spread) : ""),
          withSteps ? h("td", { class: "small steps-diff" }, row.cells.slice(1).map((c, k) => {
            if (!row.cells[0].present || !c.present) return null;
            const dq = new URLSearchParams(); dq.set("compare", `${doc.runs[0].run},${doc.runs[k + 1].run}`); dq.set("diff", `${row.cells[0].i},${c.i}`);
            return [k ? " " : "", link(dq, doc.runs.length > 2 ? `diff ${k + 2}` : "diff")];
          })) : null);
      });
      const page = Math.floor(doc.offset / PAGE) + 1;
      const pages = Math.max(1, Math.ceil(doc.total / PAGE));
      const at = (n) => { const x = params(); if (n > 1) x.set("page", String(n)); else x.delete("page"); return x; };
      fill(pager, `${page}/${pages}/${cur.toString()}`, pages > 1 ? [page > 1 ? link(at(page - 1), "‹ previous") : "", ` page ${page} of ${pages} `, page < pages ? link(at(page + 1), "next ›") : ""] : null);
    }
    let loadSeq = 0;
    async function load() {
      const mine = ++loadSeq;
      const cur = params();
      const q = new URLSearchParams();
      q.set("runs", runs.join(","));
      for (const k of ["domain", "q", "only", "setting", "gold"]) if (cur.get(k)) q.set(k, cur.get(k));
      const page = Math.max(0, parseInt(cur.get("page") || "1", 10) - 1 || 0);
      q.set("offset", String(page * PAGE)); q.set("limit", String(PAGE));
      let doc;
      try { doc = await api("/api/compare", q); } catch (e) {
        if (!current(seq) || mine !== loadSeq) return;
        if (!built) {
          clear(main);
          main.appendChild(h("div", { class: "problem error", id: "compare-refused" }, "Cannot compare: ", String(e.message || e), " ",
            link(new URLSearchParams(), "back to the runs")));
        }
        return;
      }
      if (!current(seq) || mine !== loadSeq) return;
      draw(doc, cur);
    }
    load();
    const versions = {};
    setView(seq, "compare", p.get("compare"), {
      update: () => load(),
      refresh: (ev) => {
        if (runs.some((n) => ev.runs[n] && ev.runs[n].version !== versions[n])) {
          for (const n of runs) if (ev.runs[n]) versions[n] = ev.runs[n].version;
          load();
        }
      },
    });
  }

  // ================= two runs' steps on the same task =================
  // a line diff (longest common subsequence of lines): [["same"|"del"|"add", line], ...]
  function lineDiff(a, b) {
    const x = (a || "").split("\n"), y = (b || "").split("\n");
    if (x.length * y.length > 4000000) return [...x.map((l) => ["del", l]), ...y.map((l) => ["add", l])];
    const n = x.length, m = y.length;
    const L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    const out = [];
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (x[i] === y[j]) { out.push(["same", x[i]]); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) out.push(["del", x[i++]]); else out.push(["add", y[j++]]);
    }
    while (i < n) out.push(["del", x[i++]]);
    while (j < m) out.push(["add", y[j++]]);
    return out;
  }
  window.kbLineDiff = lineDiff;
  function diffPre(ops, side) {
    const p = h("pre", { class: "diff code" });
    for (const [op, line] of ops) {
      if (side === "a" && op === "add") continue;
      if (side === "b" && op === "del") continue;
      p.appendChild(h("span", { class: "dl " + op }, line + "\n"));
    }
    return p;
  }
  async function diffView(p, seq) {
    const runs = (p.get("compare") || "").split(",").filter((x) => x);
    const idx = (p.get("diff") || "").split(",");
    const back = new URLSearchParams(p); back.delete("diff");
    setCrumbs(link(back, "compare " + runs.length + " runs"), h("span", null, "steps side by side"));
    if (runs.length !== 2 || idx.length !== 2 || runs[0] === runs[1]) {
      clear(main); main.appendChild(h("div", { class: "problem error" }, "A diff of steps needs two different runs and one record of each (compare=a,b&diff=i,j)."));
      return;
    }
    let docs;
    try { docs = await Promise.all([0, 1].map((k) => api(apiRun(runs[k], "record"), new URLSearchParams({ i: idx[k] })))); } catch (e) { if (current(seq)) { clear(main); main.appendChild(failure(e)); } return; }
    if (!current(seq)) return;
    clear(main);
    const [A, B] = docs;
    document.title = "steps · " + idText(A.row.task_id, 60);
    main.appendChild(h("h1", { id: "diff-title", class: "wrap-any" }, "Steps of ", idText(A.row.task_id, 120), A.row.task_id !== B.row.task_id ? [" vs ", idText(B.row.task_id, 120)] : ""));
    const head = (d, k) => {
      const q = new URLSearchParams(); q.set("run", runs[k]); q.set("i", String(idx[k]));
      const st = Array.isArray((d.record || {}).steps) ? d.record.steps : [];
      const tok = st.reduce((a, s) => a + (s.prompt_tokens || 0) + (s.completion_tokens || 0), 0);
      const wall = st.reduce((a, s) => a + (s.wall_s || 0), 0);
      return h("th", { class: "diff-run" }, link(q, idSpan(runs[k], 50)), h("div", { class: "small muted" }, `${outcomeText(d.row)} · ${plural(st.length, "step")} · ${int(tok)} tokens · ${secs(wall)}`),
        h("div", { class: "small" }, "answer: ", h("code", null, idText(d.row.answer, 80))));
    };
    const sa = Array.isArray((A.record || {}).steps) ? A.record.steps : [];
    const sb = Array.isArray((B.record || {}).steps) ? B.record.steps : [];
    const tb = h("tbody");
    const cell = (d, s, n, side, ops) => {
      if (!s) return h("td", { class: "muted" }, "(no such step)");
      const ctx = { run: "", i: 0, cuts: {}, render: d.render || {}, keptLen: () => 0 };
      const kids = [h("div", { class: "small muted" }, [s.outcome, s.model_s !== undefined ? "model " + secs(s.model_s) : "", s.code_s ? "code " + secs(s.code_s) : "",
        `${int((s.prompt_tokens || 0) + (s.completion_tokens || 0))} tokens`].filter((x) => x).join(" · "))];
      if (s.thought) kids.push(h("div", { class: "field" }, textField(ctx, `/steps/${n}/thought`, s.thought)));
      if (typeof s.code === "string") kids.push(h("div", { class: "field" }, h("div", { class: "field-name" }, "code"), diffPre(ops, side)));
      if (s.observation) kids.push(h("div", { class: "field" }, h("div", { class: "field-name" }, "observation"), textField(ctx, `/steps/${n}/observation`, s.observation)));
      if (s.error) kids.push(h("div", { class: "field" }, h("div", { class: "field-name" }, "error"), pre(s.error)));
      return h("td", { class: "diff-side step-" + (s.outcome || "") }, kids);
    };
    const n = Math.max(sa.length, sb.length);
    let same = 0;
    for (let k = 0; k < n; k++) {
      const a = sa[k], b = sb[k];
      const ops = lineDiff(a && typeof a.code === "string" ? a.code : "", b && typeof b.code === "string" ? b.code : "");
      const identical = a && b && a.code === b.code && a.outcome === b.outcome;
      if (identical) same++;
      tb.appendChild(h("tr", { class: "diff-step" + (identical ? " same" : ""), "data-step": String(k + 1) }, h("td", { class: "step-n" }, `step ${k + 1}`, identical ? h("div", { class: "small muted" }, "same code") : null),
        cell(A, a, k, "a", ops), cell(B, b, k, "b", ops)));
    }
    main.appendChild(h("p", { class: "muted" }, `${plural(n, "step")}; ${same} with the same code and outcome. Lines only in the first run's code are marked −, only in the second's +.`));
    main.appendChild(h("table", { class: "grid step-diff no-sticky" }, h("thead", null, h("tr", null, h("th", null, ""), head(A, 0), head(B, 1))), tb));
    if (!n) main.appendChild(h("p", { class: "muted" }, "Neither record holds steps (not an agent's run)."));
    setView(seq, "diff", p.get("compare") + "|" + p.get("diff"), {});
  }
  function outcomeText(r) { return r.outcome === "error" ? (r.error_kind || "error") : `${r.outcome} ${pct(r.value)}%`; }

  if (LOCAL) {
    LOCAL.ready().then(() => { connect(); render(); }, (e) => { clear(main); main.appendChild(failure(e)); });
  } else {
    connect();
    render();
  }
})();
