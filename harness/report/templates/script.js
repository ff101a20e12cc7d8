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
  function shown(v) {
    if (v === null || v === undefined) return "—";
    if (v === true) return "yes";
    if (v === false) return "no";
    return String(v);
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
    var row = T.r[+panel.id.slice(1)];
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
        var pre = el("pre", null, role === "tool" ? pretty(content) : content);
        if (role === "system" || content.length > 3000) {
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
      div.appendChild(el("pre", null, pretty(str(l[8]) || "")));
      div.appendChild(el("p", "m", logInfo(l)));
      box.appendChild(div);
    });
    if (row[2] >= 0) {
      box.appendChild(el("h4", null, "Expected (answer key)"));
      box.appendChild(el("pre", null, pretty(str(row[2]))));
    }
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
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var t = /^s\d+$/.test(id) ? document.getElementById(id) : null;
    if (!t) return;
    if (t.hidden && form) { form.reset(); apply(); }
    t.open = true;
    t.scrollIntoView({block: "start"});
  }
  if (form) {
    form.hidden = false;
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
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
})();
