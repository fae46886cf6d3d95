// kramabench view: the page. Plain JavaScript, no build step, no dependency.
//
// Everything that comes from a run folder is put into the page as text (text nodes, textContent,
// attribute values set through the DOM), never as HTML. The state of a view (which run, which filter,
// which task) lives in the URL's query string, so a view can be shared and reloaded.
"use strict";

(function () {
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

  // ---- DOM helpers: children that are strings become text nodes ----
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") el.className = v;
        else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
        else if (k === "text") el.textContent = v;
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
      else el.appendChild(document.createTextNode(String(k)));
    }
  }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function pre(text, cls) { return h("pre", { class: cls || "" }, text); }
  function json(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
  function pct(v, d) { return v === null || v === undefined ? "–" : (v * 100).toFixed(d === undefined ? 1 : d); }
  function num(v, d) { return v === null || v === undefined ? "–" : Number(v).toFixed(d); }
  function ci(lo, hi) { return lo === null || lo === undefined ? "" : `[${pct(lo)}, ${pct(hi)}]`; }
  function bytes(n) {
    if (n === null || n === undefined) return "";
    const u = ["B", "kB", "MB", "GB"]; let i = 0; let x = n;
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (i ? x.toFixed(1) : String(x)) + " " + u[i];
  }
  function plural(n, one, many) { return `${n} ${n === 1 ? one : (many || one + "s")}`; }
  function when(s) { return s ? String(s).replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : ""; }

  // ---- the URL is the state ----
  function params() { return new URLSearchParams(location.search); }
  function href(p) { const s = p.toString(); return s ? "?" + s : "/"; }
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
    const url = path + (p && p.toString() ? "?" + p.toString() : "");
    const res = await fetch(url, { headers: { Accept: "application/json" } });
    let doc;
    try { doc = await res.json(); } catch (e) { throw new Error(`${url}: not JSON (${res.status})`); }
    if (!res.ok) throw new Error(doc && doc.error ? doc.error : `${url}: HTTP ${res.status}`);
    return doc;
  }
  function apiRun(name, what) { return "/api/runs/" + encodeURIComponent(name) + (what ? "/" + what : ""); }

  function failure(err) { return h("div", { class: "problem error" }, "Error: ", String(err && err.message ? err.message : err)); }

  // ---- live updates: one event stream; the current view decides what to refresh ----
  let view = null;   // {refresh: fn(doc)} of the current page
  let lastEvent = null;
  function connect() {
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
  function render() {
    const p = params();
    renderSeq++;
    view = null;
    clear(crumbs);
    if (p.get("compare")) return compareView(p, renderSeq);
    if (p.get("run") && p.get("i") !== null) return taskView(p, renderSeq);
    if (p.get("run")) return runView(p, renderSeq);
    return runsView(p, renderSeq);
  }
  function current(seq) { return seq === renderSeq; }
  function setCrumbs(...items) {
    clear(crumbs);
    items.forEach((it) => { add(crumbs, [h("span", { class: "sep" }, "›"), it]); });
  }

  // ---- badges ----
  function statusBadge(s) {
    return h("span", { class: "badge status-" + (s.status || "unknown") }, s.status || "unknown");
  }
  function outcomeBadge(o) { return h("span", { class: "badge oc-" + o }, o); }
  function progress(s) {
    const done = s.done || 0;
    const total = s.planned;
    const box = h("span", { class: "progress" });
    if (total) {
      const bar = h("span", { class: "bar" }, h("span", { class: "fill", style: null }));
      bar.firstChild.style.width = Math.min(100, (100 * done) / total).toFixed(1) + "%";
      add(box, [bar, ` ${done}/${total}`]);
    } else add(box, [`${done}`]);
    return box;
  }
  // a run's score against one gold, with its interval (the report's numbers: main setting, per task)
  function goldOf(s, g) { return (s.golds && s.golds[g]) || { score: null, ci_low: null, ci_high: null, n_unscored: 0 }; }
  function goldCell(s, g) {
    const x = goldOf(s, g);
    const own = s.run_gold === g;
    return h("td", { class: "num score " + g, title: `${GOLD_NAMES[g]} gold` + (own ? " (the gold this run loaded)" : "") + (s.golds ? ` · ${s.golds.setting}, ${x.tasks} tasks` : "") },
      h("b", null, pct(x.score)), " ", h("span", { class: "muted" }, ci(x.ci_low, x.ci_high)),
      x.n_unscored ? h("span", { class: "muted" }, ` +${x.n_unscored}u`) : null,
      g === "official" && s.run_gold === "official" ? h("div", { class: "small muted" }, "--no-errata run") : null);
  }
  // the cost as every surface tells it (the server's cost_text): "unknown (N unpriced calls)" when a price is
  // missing, never a partial sum that reads as the whole
  function costText(s) { return s.cost_text || (s.cost_usd === null || s.cost_usd === undefined ? "–" : "$" + num(s.cost_usd, 4)); }
  function runTitle(s) {
    return [s.system || "(no system)", s.model ? " · " + s.model : ""].join("");
  }

  // ================= the run list =================
  const selected = new Set();
  async function runsView(p, seq) {
    document.title = "kramabench view";
    let doc;
    try { doc = await api("/api/runs"); } catch (e) { if (current(seq)) { clear(main); main.appendChild(failure(e)); } return; }
    if (!current(seq)) return;
    const draw = (doc) => {
      clear(main);
      const btn = h("button", { id: "compare-btn", disabled: selected.size < 2 ? true : null, onclick: () => {
        const q = new URLSearchParams(); q.set("compare", [...selected].join(",")); go(href(q));
      } }, `Compare selected (${selected.size})`);
      main.appendChild(h("div", { class: "bar-line" }, h("h1", null, "Runs"), h("span", { class: "muted" }, doc.results), btn));
      if (!doc.runs.length) { main.appendChild(h("p", { class: "muted" }, "No run folders here yet (a folder with manifest.json or records.jsonl). New runs appear as they start.")); return; }
      const tb = h("tbody");
      for (const s of doc.runs) {
        const cb = h("input", { type: "checkbox", class: "pick", "data-run": s.run, checked: selected.has(s.run) ? true : null, onchange: (e) => {
          if (e.target.checked) selected.add(s.run); else selected.delete(s.run);
          btn.disabled = selected.size < 2; btn.textContent = `Compare selected (${selected.size})`;
        } });
        const q = new URLSearchParams(); q.set("run", s.run);
        tb.appendChild(h("tr", { class: "run", "data-run": s.run },
          h("td", null, cb),
          h("td", { class: "run-id" }, link(q, s.run)),
          h("td", null, s.system || "–"), h("td", null, s.model || "–"), h("td", null, s.workload || "–"),
          h("td", null, s.setting || "–"),
          h("td", null, statusBadge(s), s.stop_reason ? h("div", { class: "muted small" }, s.stop_reason) : null),
          h("td", { class: "num done" }, progress(s)),
          goldCell(s, "verified"), goldCell(s, "official"),
          h("td", { class: "num" }, String(s.errors), s.unsupported ? h("div", { class: "small muted unsupported", title: "tasks the benchmark cannot support (scored as the paper does)" }, `${s.unsupported} unsupported`) : null),
          h("td", { class: "num cost" }, costText(s)),
          h("td", { class: "small" }, when(s.created_at)),
          h("td", null, s.problems ? h("span", { class: "badge warn" }, `${s.problems} problem${s.problems > 1 ? "s" : ""}`) : "")));
      }
      main.appendChild(h("table", { class: "grid runs" },
        h("thead", null, h("tr", null, ["", "Run", "System", "Model", "Workload", "Setting", "Status", "Done", "Verified % [95% CI]", "Official % (paper-comparable)", "Errors", "Cost", "Started", "Files"].map((x) => h("th", null, x)))),
        tb));
    };
    draw(doc);
    view = { refresh: async () => { try { const d = await api("/api/runs"); if (current(seq)) draw(d); } catch (e) { /* keep the last view */ } } };
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

  function summaryLine(s) {
    const v = goldOf(s, "verified"), o = goldOf(s, "official");
    return h("div", { class: "summary" },
      h("span", { class: "gold-score verified" }, h("span", { class: "muted small" }, "verified "), h("span", { class: "big" }, pct(v.score), "%"), " ",
        h("span", { class: "muted" }, ci(v.ci_low, v.ci_high))),
      h("span", { class: "gold-score official" }, h("span", { class: "muted small" }, "official (paper-comparable) "), h("b", null, pct(o.score), "%"), " ",
        h("span", { class: "muted" }, ci(o.ci_low, o.ci_high))),
      h("span", { class: "stat" }, statusBadge(s)),
      h("span", { class: "stat" }, "done ", progress(s)),
      h("span", { class: "stat" }, plural(s.errors, "error")),
      h("span", { class: "stat" }, `${s.unscored} unscored`),
      s.unsupported ? h("span", { class: "stat unsupported", title: "tasks whose data sources are missing from the lake (or that the benchmark cannot support otherwise): scored as the paper does; filter them with “Benchmark cannot support”" },
        `${s.unsupported} the benchmark cannot support`) : null,
      h("span", { class: "stat cost" }, costText(s)),
      h("span", { class: "stat" }, `${s.tokens} tokens`),
      s.workload ? h("span", { class: "stat" }, `workload ${s.workload}`) : null,
      s.setting ? h("span", { class: "stat" }, s.setting) : null,
      s.n_with_steps ? h("div", { class: "agent-totals", id: "agent-totals" },
        h("span", { class: "stat" }, h("b", null, String(s.steps)), ` steps (${(s.steps / s.n_with_steps).toFixed(1)} per task)`),
        h("span", { class: "stat" }, h("b", null, String(s.format_errors)), " replies without code"),
        h("span", { class: "stat" }, h("b", null, String(s.step_timeouts)), " steps timed out"),
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
    info("tasks scored differently by the two golds", String(sc.changed));
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

  async function runView(p, seq) {
    const name = p.get("run");
    document.title = name + " · kramabench view";
    setCrumbs(h("span", null, name));
    let run, first;
    const firstQuery = rowQuery(p);
    try { [run, first] = await Promise.all([api(apiRun(name)), api(apiRun(name, "rows"), firstQuery)]); } catch (e) {
      if (!current(seq)) return;
      clear(main); main.appendChild(failure(e));
      view = { refresh: (ev) => { if (ev.runs[name]) render(); } };  // a run folder that appears later
      return;
    }
    if (!current(seq)) return;
    clear(main);
    const head = h("div", { id: "run-head" });
    const goldsBody = h("div", { class: "golds-body" }, h("p", { class: "muted" }, "computing the floors…"));
    const goldsLine = h("span", { class: "floors-line", id: "floors-line" }, h("span", { class: "muted" }, " computing…"));
    const golds = h("details", { class: "golds-panel", id: "golds" },
      h("summary", null, h("b", null, "Floors"), " ", goldsLine), goldsBody);
    const probs = h("div", { id: "run-problems" });
    const filters = h("div", { id: "filters", class: "filters" });
    const count = h("div", { id: "count", class: "muted" });
    const tableBox = h("div", { id: "table-box" });
    const pager = h("div", { id: "pager", class: "pager" });
    main.append(head, golds, probs,
      h("details", { class: "manifest" }, h("summary", null, "Manifest"), pre(run.manifest ? json(run.manifest) : "(no readable manifest)")),
      filters, count, tableBox, pager);

    const search = h("input", { id: "search", type: "search", placeholder: "Search task ids, questions, answers, code, transcripts…", value: p.get("q") || "" });
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => setParam("q", search.value.trim(), true), 250);
    });
    const minIn = h("input", { id: "min", type: "number", min: "0", max: "100", step: "any", placeholder: "min %", value: p.get("min") || "" });
    const maxIn = h("input", { id: "max", type: "number", min: "0", max: "100", step: "any", placeholder: "max %", value: p.get("max") || "" });
    minIn.addEventListener("change", () => setParam("min", minIn.value, true));
    maxIn.addEventListener("change", () => setParam("max", maxIn.value, true));
    const allAtt = h("input", { id: "attempts", type: "checkbox", checked: p.get("attempts") === "all" ? true : null });
    allAtt.addEventListener("change", () => setParam("attempts", allAtt.checked ? "all" : "", false));
    const facetBox = h("div", { id: "facets" });
    filters.append(h("div", { class: "filter-line" }, search,
      h("label", null, "score ", minIn, " – ", maxIn),
      h("label", null, allAtt, " all attempts"),
      h("a", { href: "#", id: "clear", onclick: (e) => { e.preventDefault(); const q = new URLSearchParams(); q.set("run", name); go(href(q)); } }, "clear filters")),
    facetBox);

    function setParam(k, v, replace) {
      const q = params();
      if (v === "" || v === null) q.delete(k); else q.set(k, v);
      if (k !== "page") q.delete("page");
      go(href(q), replace);
    }

    function facetChips(facets) {
      clear(facetBox);
      const cur = params();
      for (const [facet, counts] of Object.entries(facets)) {
        const keys = Object.keys(counts);
        const chosen = (cur.get(facet) || "").split(",").filter((x) => x);
        if (keys.length <= 1 && !chosen.length) continue;
        const line = h("div", { class: "facet", "data-facet": facet }, h("span", { class: "facet-name" }, FACET_LABELS[facet] || facet));
        const all = new Set([...keys, ...chosen]);
        for (const k of all) {
          const on = chosen.includes(k);
          const label = facet === "step" ? (STEP_LABELS[k] || k) : facet === "benchmark" ? (BENCHMARK_LABELS[k] || k) : k;
          const chip = h("button", { class: "chip" + (on ? " on" : "") + (facet === "outcome" ? " oc-" + k : "") + (facet === "gold_class" ? " cls-" + k : ""),
            "data-value": k, title: facet === "step" ? `records with a step whose outcome is ${k}` : null, onclick: () => {
            const next = on ? chosen.filter((x) => x !== k) : [...chosen, k];
            setParam(facet, next.join(","), false);
          } }, label || "(none)", h("span", { class: "n" }, String(counts[k] || 0)));
          line.appendChild(chip);
        }
        facetBox.appendChild(line);
      }
    }

    function sortHeader(label, key, cls) {
      const cur = params().get("sort") || "task";
      const active = cur.replace(/^-/, "") === key;
      const desc = cur.startsWith("-");
      const next = active && !desc ? "-" + key : key;
      return h("th", { class: (cls || "") + " sortable" + (active ? " active" : ""), "data-sort": key, onclick: () => setParam("sort", next === "task" ? "" : next, false) },
        label, active ? (desc ? " ▼" : " ▲") : "");
    }

    function drawTable(doc) {
      clear(head);
      head.appendChild(h("div", { class: "bar-line" }, h("h1", null, name), h("span", { class: "muted" }, runTitle(doc.summary))));
      head.appendChild(summaryLine(doc.summary));
      facetChips(doc.facets);
      const from = doc.total ? doc.offset + 1 : 0;
      const to = Math.min(doc.offset + doc.rows.length, doc.total);
      count.textContent = `${doc.total} matching of ${doc.all} · showing ${from}–${to}`;
      count.setAttribute("data-total", String(doc.total));
      const tb = h("tbody");
      const base = params();
      const agents = doc.summary.n_with_steps > 0;
      for (const r of doc.rows) {
        const q = new URLSearchParams(base); q.set("i", String(r.i));
        const goldTd = (g) => h("td", { class: "num gold-" + g + (r.gold_changed ? " changed" : ""),
          title: r.gold_changed ? "an erratum changed this item's gold: the two golds score it differently" : null },
          r[g] === null && r.outcome !== "error" ? h("span", { class: "muted" }, "unscored") : pct(r[g]));
        tb.appendChild(h("tr", { class: "task oc-row-" + r.outcome + (r.latest ? "" : " superseded"), "data-task": r.task_id, "data-i": String(r.i) },
          h("td", { class: "task-id" }, link(q, r.task_id), r.subtask_id ? h("div", { class: "small muted" }, r.subtask_id) : null,
            r.attempt ? h("span", { class: "small muted" }, ` #${r.attempt}`) : null,
            r.gold_class ? h("div", null, h("span", { class: "badge cls cls-" + r.gold_class }, r.gold_class)) : null,
            r.benchmark.length ? h("div", null, h("span", { class: "badge warn unsupported", title: r.benchmark_why },
              "benchmark cannot support")) : null),
          h("td", null, r.domain), h("td", null, r.difficulty || ""), h("td", { class: "small" }, r.answer_type || ""),
          h("td", null, outcomeBadge(r.outcome)),
          goldTd("verified"), goldTd("official"),
          h("td", { class: "small" }, r.error_kind || ""),
          agents ? h("td", { class: "small agent-end" }, r.agent_end || "",
            r.step_outcomes.length ? h("div", { class: "muted" }, r.step_outcomes.map((o) => STEP_LABELS[o] || o).join(", ")) : null) : null,
          h("td", { class: "val" }, r.answer), h("td", { class: "val" }, r.expected),
          h("td", { class: "num" }, r.steps === null ? "" : String(r.steps)),
          h("td", { class: "num" }, num(r.wall_s, 1)),
          h("td", { class: "num cost" }, r.unpriced_calls ? "unknown" : num(r.cost_usd, 4)),
          h("td", { class: "num" }, r.tokens === null ? "" : String(r.tokens))));
      }
      clear(tableBox);
      tableBox.appendChild(h("table", { class: "grid tasks" },
        h("thead", null, h("tr", null, sortHeader("Task", "task"), sortHeader("Domain", "domain"), sortHeader("Diff.", "difficulty"),
          sortHeader("Type", "type"), sortHeader("Outcome", "outcome"), sortHeader("Verified %", "verified", "num"),
          sortHeader("Official %", "official", "num"), sortHeader("Error", "error"), agents ? sortHeader("Agent ended", "agent") : null,
          h("th", null, "Answer"), h("th", null, "Expected"), sortHeader("Steps", "steps", "num"), sortHeader("Wall s", "wall", "num"),
          sortHeader("Cost $", "cost", "num"), sortHeader("Tokens", "tokens", "num"))),
        tb));
      if (!doc.rows.length) tableBox.appendChild(h("p", { class: "muted" }, doc.all ? "No task matches this filter." : "No records yet."));
      clear(pager);
      const page = Math.floor(doc.offset / PAGE) + 1;
      const pages = Math.max(1, Math.ceil(doc.total / PAGE));
      if (pages > 1) {
        const at = (n) => { const q = params(); if (n > 1) q.set("page", String(n)); else q.delete("page"); return q; };
        add(pager, [page > 1 ? link(at(page - 1), "‹ previous") : h("span", { class: "muted" }, "‹ previous"),
          ` page ${page} of ${pages} `,
          page < pages ? link(at(page + 1), "next ›") : h("span", { class: "muted" }, "next ›")]);
      }
    }

    let goldsVersion = null;
    async function loadGolds() {
      try {
        const g = await api(apiRun(name, "golds"));
        if (!current(seq)) return;
        goldsVersion = g.version;
        clear(goldsBody);
        add(goldsBody, floorsTable(g));
        clear(goldsLine);
        add(goldsLine, floorsLine(g));
        goldsBody.setAttribute("data-version", String(g.version));
      } catch (e) { if (current(seq)) { clear(goldsBody); goldsBody.appendChild(failure(e)); } }
    }
    function show(doc, r, rq) {
      drawTable(doc);
      count.setAttribute("data-query", rq.toString());  // what the table shows (tests wait for it)
      clear(probs);
      probs.appendChild(problemsBox(r.problems));
    }
    async function load() {
      const rq = rowQuery(params());
      const [doc, r] = await Promise.all([api(apiRun(name, "rows"), rq), api(apiRun(name))]);
      if (current(seq)) show(doc, r, rq);
    }
    show(first, run, firstQuery);
    if (!current(seq)) return;
    loadGolds();
    let version = run.summary.version;
    view = { refresh: async (ev) => {
      const v = ev.runs[name];
      if (!v || v.version === version) return;
      version = v.version;
      try { await load(); } catch (e) { /* keep the last table */ }
      if (goldsVersion !== v.version) loadGolds();
    } };
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

  function kvTable(obj) {
    const tb = h("tbody");
    for (const [k, v] of Object.entries(obj)) {
      const multi = typeof v === "string" ? v.includes("\n") || v.length > 120 : v !== null && typeof v === "object";
      tb.appendChild(h("tr", null, h("th", null, k), h("td", null, multi ? pre(json(v)) : (v === null ? "null" : String(v)))));
    }
    return h("table", { class: "kv" }, tb);
  }

  // one entry of a list of steps or transcript entries: a one-line summary, the fields below
  const SUMMARY_KEYS = ["kind", "type", "role", "step", "outcome", "iteration", "exit_code", "timed_out", "oom", "error", "wall_s", "latency_s", "tokens", "prompt_tokens", "completion_tokens", "finish_reason"];
  const TEXT_KEYS = ["thought", "text", "code", "observation", "content", "response", "reply", "stdout_tail", "stderr_tail", "prompt", "message", "explanation"];
  function stepList(items, label) {
    const box = h("div", { class: "steps" });
    const details = [];
    items.forEach((it, n) => {
      const bits = [];
      let first = "";
      if (it && typeof it === "object" && !Array.isArray(it)) {
        for (const k of SUMMARY_KEYS) if (k in it && it[k] !== null && typeof it[k] !== "object") bits.push(`${k} ${it[k]}`);
        for (const k of TEXT_KEYS) if (typeof it[k] === "string" && it[k].trim()) { first = it[k].trim().split("\n")[0]; break; }
      } else first = typeof it === "string" ? it.split("\n")[0] : JSON.stringify(it);
      if (first.length > 140) first = first.slice(0, 139) + "…";
      const body = h("div", { class: "step-body" });
      if (it && typeof it === "object" && !Array.isArray(it)) {
        // short values on one line (times, flags), texts and objects as blocks; empty ones left out
        const small = [];
        for (const [k, v] of Object.entries(it)) {
          if (v === null || v === "" || v === false || (SUMMARY_KEYS.includes(k) && typeof v !== "object")) continue;
          if (v && typeof v === "object" && !Object.keys(v).length) continue;
          const short = typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= 60 && !v.includes("\n") && !TEXT_KEYS.includes(k));
          if (short) { small.push(`${k} ${typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : v}`); continue; }
          body.appendChild(h("div", { class: "field", "data-field": k }, h("div", { class: "field-name" }, k),
            typeof v === "string" ? pre(v, k === "code" ? "code" : "") : pre(json(v))));
        }
        if (small.length) body.appendChild(h("div", { class: "field small muted step-facts" }, small.join(" · ")));
      } else body.appendChild(pre(json(it)));
      const oc = it && typeof it === "object" && typeof it.outcome === "string" ? it.outcome : "";
      const d = h("details", { class: "step" + (oc ? " step-" + oc : ""), "data-outcome": oc || null }, h("summary", null, h("span", { class: "step-n" }, `${label} ${n + 1}`),
        bits.length ? h("span", { class: "step-bits" }, bits.join(" · ")) : null, first ? h("span", { class: "step-first" }, first) : null), body);
      details.push(d);
      box.appendChild(d);
    });
    const tools = h("div", { class: "step-tools" },
      h("button", { class: "expand-all", onclick: () => details.forEach((d) => { d.open = true; }) }, "expand all"),
      h("button", { class: "collapse-all", onclick: () => details.forEach((d) => { d.open = false; }) }, "collapse all"));
    return [tools, box];
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
        d.appendChild(h("table", { class: "grid preview" },
          h("thead", null, h("tr", null, t.columns.map((c, k) => h("th", { title: t.types[k] || "" }, c)))),
          h("tbody", null, t.first_rows.map((r) => h("tr", null, r.map((c) => h("td", { class: c === null ? "null" : "" }, c === null ? "NULL" : c)))))));
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
      const url = path ? apiRun(runName, "artifact") + "?path=" + encodeURIComponent(path) : null;
      const mt = String(a.media_type || "");
      const prev = h("div", { class: "artifact-preview" });
      const item = h("div", { class: "artifact", "data-name": String(a.name || path || "") },
        h("div", { class: "artifact-head" }, h("b", null, String(a.name || path || "(unnamed)")), " ",
          h("span", { class: "muted small" }, [mt, bytes(a.bytes), a.sha256 ? "sha256 " + String(a.sha256).slice(0, 12) : ""].filter((x) => x).join(" · ")), " ",
          url ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "open") : null),
        prev);
      box.appendChild(item);
      if (!url) continue;
      if (/^image\//.test(mt) || /\.(png|jpe?g|gif|webp|svg)$/i.test(path)) {
        prev.appendChild(h("img", { src: url, alt: String(a.name || path), loading: "lazy" }));
      } else {
        api(apiRun(runName, "preview"), new URLSearchParams({ path })).then((p) => {
          if (p.kind === "table") {
            prev.appendChild(h("table", { class: "grid preview" },
              h("thead", null, h("tr", null, p.columns.map((c) => h("th", null, c)))),
              h("tbody", null, p.rows.map((r) => h("tr", null, r.map((c) => h("td", null, c)))))));
            if (p.more) prev.appendChild(h("div", { class: "muted small" }, `first ${p.rows.length} rows` + (p.total_rows ? ` of ${p.total_rows}` : "")));
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
    const label = (t) => t.task_id + (t.subtask_id ? " / " + t.subtask_id : "");
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
    setCrumbs(link(back, name), h("span", null, doc.row.task_id));
    document.title = doc.row.task_id + " · " + name;
    clear(main);
    const r = doc.row;
    const rec = doc.record || {};
    const nav = h("div", { class: "task-nav", id: "task-nav" });
    main.appendChild(nav);
    taskNav(nav, p, name, i, seq);
    main.appendChild(h("div", { class: "bar-line" }, h("h1", { id: "task-title" }, r.task_id, r.subtask_id ? " / " + r.subtask_id : ""),
      outcomeBadge(r.outcome), h("span", { class: "big" }, pct(r.value), "%"), h("span", { class: "muted small" }, `${r.gold} gold`),
      r.gold_changed ? h("span", { class: "muted" }, `${r.gold === "verified" ? "official" : "verified"} ${r[r.gold === "verified" ? "official" : "verified"] === null ? "unscored" : pct(r[r.gold === "verified" ? "official" : "verified"]) + "%"}`) : null,
      h("span", { class: "muted" }, [r.domain, r.difficulty, r.answer_type, r.setting, r.attempt ? "attempt " + r.attempt : ""].filter((x) => x).join(" · "))));
    if (doc.problem) main.appendChild(h("div", { class: "problem warn" }, doc.problem));
    if (doc.attempts.length > 1) {
      main.appendChild(h("div", { class: "attempts" }, "Attempts: ", doc.attempts.map((a) => {
        const q = new URLSearchParams(p); q.set("i", String(a.i));
        const label = `#${a.attempt} ${a.outcome}${a.latest ? " (counted)" : ""}`;
        return String(a.i) === String(i) ? h("b", null, label, " ") : [link(q, label), " "];
      })));
    }
    main.appendChild(section("Question", doc.question ? pre(doc.question, "question") : h("p", { class: "muted" }, doc.questions_note || "The workload file is not on this machine.")));
    main.appendChild(h("div", { class: "two" },
      section("Answer", pre(rec.answer === undefined ? "(none)" : json(rec.answer), "answer")),
      section("Expected", pre(rec.expected === undefined ? "(none)" : json(rec.expected), "expected"))));
    if (doc.golds) main.appendChild(section("Golds", ...goldsBlock(doc.golds)));

    const scoring = { metric: rec.metric, score: rec.score, unscored: rec.unscored };
    for (const [k, v] of Object.entries(rec)) if (!KNOWN.has(k) && /score|floor|verified|official/i.test(k)) scoring[k] = v;
    const scoreBox = [kvTable(scoring)];
    if (rec.score_details && typeof rec.score_details === "object" && Object.keys(rec.score_details).length) scoreBox.push(h("h3", null, "Details"), kvTable(rec.score_details));
    main.appendChild(section("Scoring", ...scoreBox));
    if (rec.error) main.appendChild(section("Error", typeof rec.error === "object" ? [h("p", null, h("b", null, String(rec.error.kind || "error"))), pre(String(rec.error.message || json(rec.error)), "error-text")] : pre(json(rec.error))));

    const subIds = new Set([...Object.keys(rec.subtask_answers || {}), ...Object.keys(rec.subtask_scores || {}), ...Object.keys(rec.subtask_details || {}), ...Object.keys(doc.subtask_questions || {})]);
    if (subIds.size) {
      const tb = h("tbody");
      for (const id of subIds) {
        const det = (rec.subtask_details || {})[id] || {};
        const rest = Object.assign({}, det); delete rest.expected;
        const sc = (rec.subtask_scores || {})[id];
        tb.appendChild(h("tr", null, h("td", { class: "task-id" }, id), h("td", { class: "wrap" }, (doc.subtask_questions || {})[id] || ""),
          h("td", { class: "val" }, id in (rec.subtask_answers || {}) ? json(rec.subtask_answers[id]) : "–"),
          h("td", { class: "val" }, "expected" in det ? json(det.expected) : ""),
          h("td", { class: "num" }, sc === undefined ? "" : pct(sc)),
          h("td", { class: "small" }, Object.keys(rest).length ? JSON.stringify(rest) : "")));
      }
      main.appendChild(section("Subtasks", h("table", { class: "grid subtasks" },
        h("thead", null, h("tr", null, ["Subtask", "Question", "Answer", "Expected", "Score %", "Details"].map((x) => h("th", null, x)))), tb)));
    }
    if (rec.pipeline_code) main.appendChild(section("Code", pre(rec.pipeline_code, "code")));
    if (Array.isArray(rec.steps) && rec.steps.length) {
      const facts = [r.agent_end ? `ended: ${r.agent_end}` : "", r.format_errors ? plural(r.format_errors, "reply", "replies") + " without code" : "",
        r.step_timeouts ? plural(r.step_timeouts, "step") + " timed out" : ""].filter((x) => x).join(" · ");
      main.appendChild(section(`Steps (${rec.steps.length})`, facts ? h("p", { class: "muted agent-facts" }, facts) : null, ...stepList(rec.steps, "step")));
    }
    if (Array.isArray(rec.transcript) && rec.transcript.length) main.appendChild(section(`Transcript (${rec.transcript.length} entries)`, ...stepList(rec.transcript, "#")));
    if (Array.isArray(rec.artifacts) && rec.artifacts.length) main.appendChild(section(`Artifacts (${rec.artifacts.length})`, artifactBlock(name, rec.artifacts)));
    const timing = {};
    for (const k of ["wall_s", "started_at", "finished_at", "iterations", "system", "model", "run_id"]) if (k in rec) timing[k] = rec[k];
    if (rec.usage && typeof rec.usage === "object") for (const [k, v] of Object.entries(rec.usage)) timing["usage." + k] = v;
    if (Array.isArray(rec.files_read)) timing.files_read = rec.files_read.join("\n");
    main.appendChild(section("Run details", kvTable(timing)));
    const other = {};
    for (const [k, v] of Object.entries(rec)) if (!KNOWN.has(k) && !(k in scoring)) other[k] = v;
    if (Object.keys(other).length) main.appendChild(section("Other fields", kvTable(other)));
    main.appendChild(h("details", { class: "raw" }, h("summary", null, "The record as JSON"), pre(json(rec))));
  }

  // ================= comparison =================
  async function compareView(p, seq) {
    const runs = (p.get("compare") || "").split(",").filter((x) => x);
    document.title = "compare · kramabench view";
    setCrumbs(h("span", null, "compare " + runs.length + " runs"));
    const q = new URLSearchParams();
    q.set("runs", runs.join(","));
    for (const k of ["domain", "q", "only", "setting", "gold"]) if (p.get(k)) q.set(k, p.get(k));
    const page = Math.max(0, parseInt(p.get("page") || "1", 10) - 1 || 0);
    q.set("offset", String(page * PAGE)); q.set("limit", String(PAGE));
    let doc;
    try { doc = await api("/api/compare", q); } catch (e) { if (current(seq)) { clear(main); main.appendChild(failure(e)); } return; }
    if (!current(seq)) return;
    const setParam = (k, v, replace) => { const n = params(); if (v) n.set(k, v); else n.delete(k); n.delete("page"); go(href(n), replace); };
    clear(main);
    main.appendChild(h("h1", null, `Comparing ${doc.runs.length} runs on ${doc.n_tasks} tasks`, h("span", { class: "muted" }, ` · ${doc.setting} · ${doc.n_differ} differ (${doc.gold} gold)`)));
    const sb = h("tbody");
    const delta = (pair, cls) => pair ? [
      h("td", { class: "num " + cls }, pair.mean_diff === null ? "–" : (pair.mean_diff >= 0 ? "+" : "") + pct(pair.mean_diff) + " pp"),
      h("td", { class: "num muted" }, pair.ci_low === null ? "" : `[${pct(pair.ci_low)}, ${pct(pair.ci_high)}]`)] : [h("td", { class: "muted" }, "baseline"), h("td")];
    doc.runs.forEach((s, k) => {
      const pair = k ? doc.pairs[k - 1] : null;
      const pv = k ? doc.pairs_by_gold.verified[k - 1] : null, po = k ? doc.pairs_by_gold.official[k - 1] : null;
      const rq = new URLSearchParams(); rq.set("run", s.run);
      sb.appendChild(h("tr", { class: "cmp-run" }, h("td", null, link(rq, s.run)), h("td", null, runTitle(s)),
        goldCell(s, "verified"), goldCell(s, "official"),
        h("td", { class: "num" }, String(s.done)),
        ...delta(pv, "diff diff-verified"), ...delta(po, "diff diff-official"),
        pair ? h("td", { class: "num" }, pair.p_value === null ? "" : pair.p_value.toFixed(3)) : h("td"),
        pair ? h("td", { class: "num" }, `${pair.wins_a} / ${pair.ties} / ${pair.wins_b}`) : h("td"),
        pair ? h("td", { class: "num" }, String(pair.n_common)) : h("td"),
        pair ? h("td", { class: "small" }, [pair.only_in_a.length ? `${pair.only_in_a.length} only here` : "", pair.only_in_b.length ? `${pair.only_in_b.length} only in baseline` : "",
          pair.unscored_in_a.length + pair.unscored_in_b.length ? `${pair.unscored_in_a.length + pair.unscored_in_b.length} unscored` : ""].filter((x) => x).join(", ")) : h("td")));
    });
    main.appendChild(h("div", { class: "scroll-x" }, h("table", { class: "grid cmp-summary" }, h("thead", null, h("tr", null,
      ["Run", "System · model", "Verified % [95% CI]", "Official % (paper-comparable)", "Tasks", "Δ verified", "[95% CI]", "Δ official", "[95% CI]",
        "p", "better / tie / worse", "paired", ""].map((x) => h("th", null, x)))), sb)));
    main.appendChild(h("p", { class: "muted small" }, `Δ: mean over the tasks scored in both runs of (this run − the first run), in percentage points, against the verified gold (official + errata) and the official gold (the paper-comparable number); its interval is the paired bootstrap of scorers.stats (10,000 resamples). p, better / tie / worse and paired tasks: against the ${doc.gold} gold.`));

    const search = h("input", { id: "search", type: "search", placeholder: "Search tasks…", value: p.get("q") || "" });
    let timer = null;
    search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => setParam("q", search.value.trim(), true), 250); });
    const only = h("select", { id: "only" }, ["all", "differ", "same"].map((o) => h("option", { value: o, selected: (p.get("only") || "all") === o ? true : null }, o === "all" ? "all tasks" : o === "differ" ? "where they differ" : "where they agree")));
    only.addEventListener("change", () => setParam("only", only.value === "all" ? "" : only.value, false));
    const goldSel = h("select", { id: "gold" }, ["verified", "official"].map((g) => h("option", { value: g, selected: doc.gold === g ? true : null }, `cells: ${GOLD_NAMES[g]} gold`)));
    goldSel.addEventListener("change", () => setParam("gold", goldSel.value, false));
    const doms = (p.get("domain") || "").split(",").filter((x) => x);
    const chips = doc.domains.map((d) => h("button", { class: "chip" + (doms.includes(d) ? " on" : ""), "data-value": d, onclick: () => {
      const next = doms.includes(d) ? doms.filter((x) => x !== d) : [...doms, d]; setParam("domain", next.join(","), false);
    } }, d));
    main.appendChild(h("div", { class: "filters" }, h("div", { class: "filter-line" }, search, only, goldSel), h("div", { class: "facet" }, h("span", { class: "facet-name" }, "Domain"), chips)));
    main.appendChild(h("div", { id: "count", class: "muted", "data-total": String(doc.total) }, `${doc.total} tasks shown (the ones that differ first)`));
    const tb = h("tbody");
    for (const row of doc.rows) {
      tb.appendChild(h("tr", { class: "cmp-row" + (row.differ ? " differ" : ""), "data-task": row.task_id },
        h("td", { class: "task-id" }, row.task_id, row.subtask_id ? h("div", { class: "small muted" }, row.subtask_id) : null),
        h("td", null, row.domain), h("td", { class: "small" }, row.answer_type || ""),
        row.cells.map((c, k) => {
          if (!c.present) return h("td", { class: "num muted" }, "—");
          const lq = new URLSearchParams(); lq.set("run", doc.runs[k].run); lq.set("i", String(c.i));
          const other = doc.gold === "verified" ? "official" : "verified";
          const tip = (c.answer || "") + (c.gold_changed ? `\n${other} gold: ${c[other] === null ? "unscored" : pct(c[other])}%` : "");
          return h("td", { class: "num cell oc-" + c.outcome + (c.gold_changed ? " changed" : ""), title: tip }, link(lq, c.outcome === "error" ? (c.error_kind || "error") : c.outcome === "unscored" ? "unscored" : pct(c.value)));
        }),
        h("td", { class: "num" }, row.differ ? pct(row.spread) : "")));
    }
    main.appendChild(h("table", { class: "grid compare" }, h("thead", null, h("tr", null, h("th", null, "Task"), h("th", null, "Domain"), h("th", null, "Type"),
      doc.runs.map((s) => h("th", { class: "num" }, s.run)), h("th", { class: "num" }, "spread"))), tb));
    const pages = Math.max(1, Math.ceil(doc.total / PAGE));
    if (pages > 1) {
      const at = (n) => { const x = params(); if (n > 1) x.set("page", String(n)); else x.delete("page"); return x; };
      main.appendChild(h("div", { class: "pager" }, page > 0 ? link(at(page), "‹ previous") : "", ` page ${page + 1} of ${pages} `, page + 1 < pages ? link(at(page + 2), "next ›") : ""));
    }
    const versions = Object.fromEntries(runs.map((n) => [n, lastEvent && lastEvent.runs[n] ? lastEvent.runs[n].version : null]));
    view = { refresh: (ev) => {
      if (runs.some((n) => ev.runs[n] && ev.runs[n].version !== versions[n])) {
        if (document.activeElement === search) return; // never pull the page from under the typing hand
        render();
      }
    } };
  }

  connect();
  render();
})();
