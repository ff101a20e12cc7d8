(function () {
  "use strict";
  var filterNode = document.getElementById("filter-data");
  var txNode = document.getElementById("transcript-data");
  if (!filterNode || !txNode) return;
  var FD = JSON.parse(filterNode.textContent);
  var FR = FD.r, F = FD.f, IDS = FD.ids;
  var ROLES = {s: "system", u: "user", a: "assistant", t: "tool"};
  var panels = FR.map(function (_, i) { return document.getElementById("s" + i); });
  var form = document.getElementById("filters");
  var count = document.getElementById("count");
  var T = null, failed = null, waiting = [];

  function loadTranscripts() {
    var text = txNode.textContent;
    if (txNode.getAttribute("data-encoding") !== "deflate-base64") return Promise.resolve(JSON.parse(text));
    if (typeof DecompressionStream === "undefined") return Promise.reject(new Error("this browser cannot inflate the embedded transcripts (no DecompressionStream)"));
    var bin = atob(text), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text().then(JSON.parse);
  }
  loadTranscripts().then(function (data) { T = data; }, function (err) { failed = String(err && err.message || err); })
    .then(function () { var w = waiting; waiting = []; w.forEach(function (p) { build(p); }); });

  function str(i) { return i >= 0 ? T.s[i] : null; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function pretty(text) {
    if (typeof text !== "string") return text;
    var t = text.trim();
    if (t[0] !== "{" && t[0] !== "[") return text;
    try { return JSON.stringify(JSON.parse(t), null, 2); } catch (e) { return text; }
  }
  function g3(v) {  // Python's "%.3g", as the score strip beside the table writes numbers
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v) || !isFinite(v)) return String(v);
    var t = v.toPrecision(3);
    if (t.indexOf("e") < 0 && t.indexOf(".") >= 0) t = t.replace(/0+$/, "").replace(/\.$/, "");
    return t;
  }
  function shown(v) {
    if (v === null || v === undefined) return "—";
    if (v === true) return "yes";
    if (v === false) return "no";
    return g3(v);
  }
  var FOLD_CHARS = 800, FOLD_LINES = 12;
  function folded(text) {  // a long tool result: its first lines, and a button that shows all of it
    var pre = el("pre", null, text);
    var lines = text.split("\n");
    if (text.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return pre;
    var head = lines.slice(0, FOLD_LINES).join("\n");
    if (head.length > FOLD_CHARS) head = head.slice(0, FOLD_CHARS);
    pre.textContent = head + " …";
    var box = el("div", "fold");
    var button = el("button", null, "show all " + text.length + " characters");
    button.type = "button";
    button.addEventListener("click", function () { pre.textContent = text; box.removeChild(button); });
    box.appendChild(pre);
    box.appendChild(button);
    return box;
  }
  function money(v) { return typeof v === "number" ? "$" + g3(v) : "unknown"; }
  function ms(v) { return typeof v === "number" ? (v < 1 ? (v * 1000).toFixed(1) + " ms" : v.toFixed(2) + " s") : "?"; }
  function callsTable(row, model) {
    var P = FD.p || {}, calls = row[4] || [];
    var table = el("table", "calls"), head = el("tr");
    ["call", "request", "tools offered", "usage (tokens)", "cost", "latency", "finish", "attempts"].forEach(function (h) {
      head.appendChild(el("th", null, h));
    });
    table.appendChild(head);
    var request = "model " + model;
    ["temperature", "max_tokens", "timeout_s", "api_base"].forEach(function (k) {
      if (P[k] !== undefined && P[k] !== null) request += " · " + k + " " + P[k];
    });
    if (typeof row[6] === "number") request += " · seed " + row[6];
    var tools = str(row[5]) || "none";
    calls.forEach(function (c, i) {
      var tr = el("tr");
      tr.appendChild(el("td", null, String(i + 1) + " (round " + c[0] + ")"));
      tr.appendChild(el("td", null, request));
      tr.appendChild(el("td", null, tools));
      tr.appendChild(el("td", null, c[2] + " prompt + " + c[3] + " completion" +
        (str(c[4]) === "counted" ? " (counted: the provider reported none)" : "") +
        (c[7] ? " · " + c[7] + " tool call(s)" : "")));
      tr.appendChild(el("td", null, money(c[5])));
      tr.appendChild(el("td", null, c[8] ? "cache replay" : ms(c[1])));
      tr.appendChild(el("td", null, str(c[6]) || "—"));
      tr.appendChild(el("td", null, c[8] ? "0 (from the cache)" : String(c[9])));
      table.appendChild(tr);
    });
    return table;
  }
  function sampleId(i) {
    var r = FR[i];
    return IDS[r[4]] + "|" + F.arm[r[0]] + "|" + F.model[r[2]] + "|" + r[5];
  }
  var byId = null;
  function panelFor(sid) {
    if (!byId) { byId = {}; for (var i = 0; i < FR.length; i++) byId[sampleId(i)] = i; }
    var i = byId[sid];
    return i === undefined ? null : panels[i];
  }
  function logInfo(l) {
    return "status " + str(l[2]) + " · disclosed: " + (str(l[3]) || "none") + " · " + l[4] + " result tokens · " +
      (typeof l[5] === "number" ? (l[5] * 1000).toFixed(1) + " ms" : "?") + (l[6] ? " · storage read" : "");
  }
  function scoreTable(scores) {
    var table = el("table", "sc"), head = el("tr");
    ["score", "value", "check", "reason"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    scores.forEach(function (sc) {
      var tr = el("tr");
      tr.appendChild(el("td", null, str(sc[0])));
      tr.appendChild(el("td", null, shown(sc[1])));
      var check = el("td");
      if (sc[2] === true) check.appendChild(el("b", "ok", "✓ pass"));
      else if (sc[2] === false) check.appendChild(el("b", "no", "✗ fail"));
      else check.textContent = "—";
      tr.appendChild(check);
      tr.appendChild(el("td", null, str(sc[3]) || ""));
      table.appendChild(tr);
    });
    return table;
  }
  function build(panel) {
    var box = panel.querySelector(".tx");
    if (!box || box.getAttribute("data-built")) return;
    if (!T && !failed) { if (waiting.indexOf(panel) < 0) waiting.push(panel); return; }
    box.setAttribute("data-built", "1");
    if (failed) { box.appendChild(el("p", "err", "Transcript unavailable: " + failed)); return; }
    var index = +panel.id.slice(1), row = T.r[index];
    if (!row) return;
    var strip = panel.querySelector(".ss");
    if (row[3].length && strip) strip.parentNode.replaceChild(scoreTable(row[3]), strip);
    var answerNode = panel.querySelector(".ans");
    var logs = {}, seen = {};
    row[1].forEach(function (l) { logs[str(l[0])] = l; });
    box.appendChild(el("h4", null, "Transcript"));
    row[0].forEach(function (m) {
      var role = ROLES[m[0]] || m[0];
      var div = el("div", "msg msg-" + role);
      var callId = str(m[3]);
      div.appendChild(el("h5", null, callId ? role + " · " + callId : role));
      var content = m[1] === -2 ? (answerNode ? answerNode.textContent : "") : str(m[1]);
      if (content !== null && content !== "") {
        var pre = role === "tool" ? folded(pretty(content)) : el("pre", null, content);
        if (role === "system" || (role !== "tool" && content.length > 3000)) {
          var fold = el("details");
          fold.appendChild(el("summary", "m", "show " + content.length + " characters"));
          fold.appendChild(pre);
          pre = fold;
        }
        div.appendChild(pre);
      }
      (m[2] || []).forEach(function (c) {
        var p = el("div", "call");
        p.appendChild(el("b", null, "→ call " + (str(c[1]) || "?") + " "));
        p.appendChild(el("code", null, str(c[0]) || ""));
        div.appendChild(p);
        div.appendChild(el("pre", null, pretty(str(c[2]) || "")));
      });
      if (role === "tool" && callId && logs[callId]) {
        seen[callId] = true;
        div.appendChild(el("p", "m", logInfo(logs[callId])));
      }
      box.appendChild(div);
    });
    row[1].forEach(function (l) {
      if (seen[str(l[0])]) return;
      var div = el("div", "msg msg-tool");
      div.appendChild(el("h5", null, "tool log · " + (str(l[0]) || "") + " · " + (str(l[1]) || "")));
      div.appendChild(el("pre", null, pretty(str(l[7]) || "")));
      div.appendChild(folded(pretty(str(l[8]) || "")));
      div.appendChild(el("p", "m", logInfo(l)));
      box.appendChild(div);
    });
    if (row[4] && row[4].length) {
      box.appendChild(el("h4", null, "Model calls"));
      box.appendChild(callsTable(row, F.model[FR[index][2]]));
    }
    if (row[2] >= 0) {
      box.appendChild(el("h4", null, "Expected (answer key)"));
      box.appendChild(el("pre", null, pretty(str(row[2]))));
    }
    var link = el("a", "plink", "link to this sample");
    link.href = "#sample=" + encodeURIComponent(sampleId(index));
    box.appendChild(link);
  }
  document.addEventListener("toggle", function (ev) {
    var t = ev.target;
    if (t && t.classList && t.classList.contains("p") && t.open) build(t);
  }, true);

  var fields = ["arm", "category", "model", "outcome"];
  function apply() {
    var want = fields.map(function (f) { return form.elements[f].value; });
    var q = form.elements.q.value.trim().toLowerCase();
    var n = 0;
    for (var i = 0; i < FR.length; i++) {
      var r = FR[i], ok = true;
      for (var k = 0; k < 4 && ok; k++) ok = !want[k] || F[fields[k]][r[k]] === want[k];
      if (ok && q) ok = String(IDS[r[4]]).toLowerCase().indexOf(q) >= 0;
      if (panels[i]) panels[i].hidden = !ok;
      if (ok) n++;
    }
    count.textContent = n + " of " + FR.length + " shown";
  }
  var sortedBy = "";
  function sortPanels() {  // samples by latency, tokens or cost (largest first; unknown last), or page order
    var key = form.elements.sort ? form.elements.sort.value : "";
    if (key === sortedBy) return;
    sortedBy = key;
    var order = FR.map(function (_, i) { return i; });
    if (key) {
      var k = +key;
      order.sort(function (a, b) {
        var x = FR[a][k], y = FR[b][k];
        if (typeof x !== "number") return typeof y !== "number" ? a - b : 1;
        if (typeof y !== "number") return -1;
        return y - x || a - b;
      });
    }
    var box = document.getElementById("panels"), frag = document.createDocumentFragment();
    order.forEach(function (i) { if (panels[i]) frag.appendChild(panels[i]); });
    box.appendChild(frag);
  }
  function reveal() {
    var hash = location.hash.slice(1), t = null;
    var id;
    try { id = decodeURIComponent(hash); } catch (e) { return; }
    if (id.indexOf("sample=") === 0) t = panelFor(id.slice(7));
    else if (id.indexOf("scenario=") === 0) { gridShow(id.slice(9)); return; }
    else if (/^s\d+$/.test(id)) t = document.getElementById(id);
    if (!t) return;
    if (t.hidden && form) { form.reset(); apply(); sortPanels(); }
    t.open = true;
    t.scrollIntoView({block: "start"});
  }

  // ------------------------------------------------ the scenario x arm grid
  var gform = document.getElementById("grid-filters"), gtable = document.getElementById("sg");
  var grows = gtable ? Array.prototype.slice.call(gtable.tBodies[0].rows) : [];
  var gcount = document.getElementById("grid-count");
  function gridApply() {
    var cat = gform.elements.category.value, oc = gform.elements.outcome.value;
    var q = gform.elements.q.value.trim().toLowerCase(), differ = gform.elements.differ.checked, n = 0;
    grows.forEach(function (tr) {
      var ok = (!cat || tr.getAttribute("data-cat") === cat) && (!differ || tr.hasAttribute("data-differ"));
      if (ok && q) ok = tr.cells[0].textContent.toLowerCase().indexOf(q) >= 0;
      if (ok && oc) ok = !!tr.querySelector("td.g-" + oc.replace(/[^a-z_]/g, ""));
      tr.hidden = !ok;
      if (ok) n++;
    });
    gcount.textContent = n + " of " + grows.length + " scenarios";
  }
  function gridSort(button) {
    var key = button.getAttribute("data-sort");
    var dir = button.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    gtable.querySelectorAll("thead button").forEach(function (b) { b.removeAttribute("aria-sort"); });
    button.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    function value(tr) {
      if (key === "id") return tr.cells[0].querySelector("code").textContent;
      if (key === "cat") return tr.getAttribute("data-cat");
      var v = tr.cells[+key + 2].getAttribute("data-v");
      return v === "" || v === null ? null : +v;
    }
    var keyed = grows.map(function (tr, i) { return [value(tr), i, tr]; });
    keyed.sort(function (a, b) {
      if (a[0] === null || b[0] === null) return a[0] === b[0] ? a[1] - b[1] : (a[0] === null ? 1 : -1);
      return (a[0] < b[0] ? -dir : a[0] > b[0] ? dir : 0) || a[1] - b[1];
    });
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) { frag.appendChild(k[2]); });
    gtable.tBodies[0].appendChild(frag);
  }
  function gridShow(scenario) {  // #scenario=ID: the grid filtered to that scenario
    if (!gform) return;
    gform.reset();
    gform.elements.q.value = scenario;
    gridApply();
    document.getElementById("grid").scrollIntoView({block: "start"});
  }
  if (gform && gtable) {
    gform.hidden = false;
    gform.addEventListener("input", gridApply);
    gform.addEventListener("change", gridApply);
    gform.addEventListener("submit", function (ev) { ev.preventDefault(); });
    gtable.tHead.addEventListener("click", function (ev) {
      var b = ev.target.closest ? ev.target.closest("button[data-sort]") : null;
      if (b) gridSort(b);
    });
  }
  if (form) {
    form.hidden = false;
    form.addEventListener("input", apply);
    form.addEventListener("change", function () { apply(); sortPanels(); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
    document.getElementById("expand").addEventListener("click", function () {
      panels.forEach(function (p) { if (p && !p.hidden) p.open = true; });
    });
    document.getElementById("collapse").addEventListener("click", function () {
      panels.forEach(function (p) { if (p) p.open = false; });
    });
    apply();
  }
  panels.forEach(function (p) { if (p && p.open) build(p); });
  window.addEventListener("hashchange", reveal);
  reveal();
  window.__reportReadyAt = window.performance ? performance.now() : 0;
  document.documentElement.setAttribute("data-ready", "1");
})();
