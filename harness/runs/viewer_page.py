"""The viewer's index page: a table of every run, filled (and refreshed) from ``/_runs.json``.

Every value is written with ``textContent`` (a run id or suite name is never
markup). The page polls every 2 s while a run is in progress, every 10 s
otherwise (a new run folder appears without a reload).
"""

INDEX_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>recall-eval runs</title>
<link rel="icon" href="data:,">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f4; position: sticky; top: 0; }
.muted { color: #777; }
.v-pass { color: #176d2c; font-weight: 600; } .v-fail { color: #b3261e; font-weight: 600; }
.v-inconclusive, .v-incomplete { color: #8a5a00; font-weight: 600; }
.s-running { color: #0b57d0; font-weight: 600; }
.bar { margin: .6em 0 1em; display: flex; gap: 1em; align-items: center; }
button { font: inherit; padding: .3em .8em; }
</style></head>
<body>
<h1>recall-eval runs</h1>
<div class="muted" id="root"></div>
<div class="bar">
  <button id="compare" disabled>compare the two ticked runs</button>
  <a id="history" href="_history">history of every run</a>
  <span class="muted" id="updated"></span>
</div>
<table id="runs"><thead><tr>
  <th></th><th>run</th><th>suite</th><th>models</th><th>arms</th><th>verdict</th>
  <th>continuity &Delta; (memory &minus; baseline) [95% CI]</th><th>started</th><th>status</th>
</tr></thead><tbody></tbody></table>
<p class="muted" id="empty" hidden>No run folder (a folder holding run.json) below this folder yet.</p>
<script>
(function () {
  "use strict";
  var ticked = [];
  var body = document.querySelector("#runs tbody");
  var button = document.getElementById("compare");

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }
  function signed(x) { return (x > 0 ? "+" : "") + x.toFixed(2); }
  function delta(c) {
    if (typeof c.value !== "number") { return c.model + ": n/a"; }
    var ci = (typeof c.ci_low === "number" && typeof c.ci_high === "number")
      ? " [" + signed(c.ci_low) + ", " + signed(c.ci_high) + "]" : "";
    return c.model + ": " + signed(c.value) + ci;
  }
  function url(path) { return path.split("/").map(encodeURIComponent).join("/"); }
  function refreshButton() {
    button.disabled = ticked.length !== 2;
  }
  button.addEventListener("click", function () {
    if (ticked.length === 2) {
      location.href = "_compare?a=" + encodeURIComponent(ticked[0]) + "&b=" + encodeURIComponent(ticked[1]);
    }
  });
  function render(data) {
    document.getElementById("root").textContent = data.root;
    body.textContent = "";
    ticked = ticked.filter(function (p) { return data.runs.some(function (r) { return r.path === p; }); });
    data.runs.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-path", r.path);
      tr.setAttribute("data-status", r.status);
      var box = document.createElement("input");
      box.type = "checkbox";
      box.disabled = !r.comparable;
      box.title = r.comparable ? "tick two runs to compare them" : "no report yet: nothing to compare";
      box.checked = ticked.indexOf(r.path) >= 0;
      box.addEventListener("change", function () {
        if (box.checked) { ticked.push(r.path); if (ticked.length > 2) { ticked.shift(); } }
        else { ticked = ticked.filter(function (p) { return p !== r.path; }); }
        Array.prototype.forEach.call(body.querySelectorAll("input"), function (b) {
          b.checked = ticked.indexOf(b.parentNode.parentNode.getAttribute("data-path")) >= 0;
        });
        refreshButton();
      });
      var first = document.createElement("td");
      first.appendChild(box);
      tr.appendChild(first);
      var name = cell(tr, "");
      if (r.report) {
        var a = document.createElement("a");
        a.href = (r.path ? url(r.path) + "/" : "") + "index.html";
        a.textContent = r.path || r.run_id;
        name.appendChild(a);
      } else {
        name.textContent = r.path || r.run_id;
      }
      if (r.problem) { var p = document.createElement("div"); p.className = "muted"; p.textContent = r.problem; name.appendChild(p); }
      cell(tr, r.suite + " (" + r.scenarios + " scenarios)");
      cell(tr, r.models.join(", "));
      cell(tr, r.arms.join(", "));
      cell(tr, r.verdict || "no report", r.verdict ? "verdict v-" + r.verdict : "verdict muted");
      cell(tr, r.continuity.map(delta).join("; ") || "", "continuity");
      cell(tr, r.started_at);
      var status = r.status + " " + r.samples_done + "/" + r.samples_planned;
      cell(tr, status, "status s-" + r.status);
      body.appendChild(tr);
    });
    document.getElementById("empty").hidden = data.runs.length > 0;
    refreshButton();
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.documentElement.setAttribute("data-ready", "1");
    var live = data.runs.some(function (r) { return r.status === "running"; });
    setTimeout(poll, live ? 2000 : 10000);
  }
  function poll() {
    fetch("_runs.json", {cache: "no-store"}).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.json();
    }).then(render).catch(function (e) {
      document.getElementById("updated").textContent = "cannot reach the viewer: " + e.message;
      document.documentElement.setAttribute("data-ready", "1");
      setTimeout(poll, 5000);
    });
  }
  poll();
})();
</script>
</body></html>
"""
