// report.html's behaviour: sort and filter the configuration table, filter the questions, and
// fill a question's retrieved chunks (text from the JSON block, evidence marked) when it opens.
// Text is only ever set with createTextNode / textContent, never parsed as HTML.
(function () {
  "use strict";
  var table = document.getElementById("configs");
  if (table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var filters = document.querySelectorAll("select[data-f]");
    var applyFilters = function () {
      rows.forEach(function (r) {
        var show = true;
        filters.forEach(function (f) {
          if (f.value !== "" && r.getAttribute("data-" + f.getAttribute("data-f")) !== f.value) {
            show = false;
          }
        });
        r.hidden = !show;
      });
    };
    filters.forEach(function (f) { f.addEventListener("change", applyFilters); });
    var order = {};
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var dir = order[i] === 1 ? -1 : 1;
        order = {};
        order[i] = dir;
        var key = function (r) {
          var c = r.cells[i];
          var v = c.getAttribute("data-v");
          return v === null ? c.textContent : parseFloat(v);
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (typeof x === "number" && typeof y === "number") {
            if (isNaN(x)) { return 1; }
            if (isNaN(y)) { return -1; }
            return (x - y) * dir;
          }
          return String(x).localeCompare(String(y)) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  var store = document.getElementById("chunk-texts");
  var texts = store ? JSON.parse(store.textContent) : [];
  var fill = function (details) {
    details.querySelectorAll("pre.ct[data-t]").forEach(function (pre) {
      if (pre.getAttribute("data-done")) { return; }
      var text = texts[Number(pre.getAttribute("data-t"))] || "";
      var pos = 0;
      (pre.getAttribute("data-m") || "").split(",").forEach(function (m) {
        if (m === "") { return; }
        var p = m.split("-");
        var a = Number(p[0]), b = Number(p[1]);
        pre.appendChild(document.createTextNode(text.slice(pos, a)));
        var mark = document.createElement("mark");
        mark.className = p[2] === "1" ? "whole" : "cut";
        mark.title = p[2] === "1" ? "evidence, whole in this chunk" : "evidence, cut by the chunk boundary";
        mark.textContent = text.slice(a, b);
        pre.appendChild(mark);
        pos = b;
      });
      pre.appendChild(document.createTextNode(text.slice(pos)));
      pre.setAttribute("data-done", "1");
      var first = pre.querySelector("mark");
      if (first) { pre.scrollTop = Math.max(0, first.offsetTop - pre.offsetTop - 40); }
    });
  };
  var questions = document.querySelectorAll("details.q");
  questions.forEach(function (d) {
    if (d.open) { fill(d); }
    d.addEventListener("toggle", function () { if (d.open) { fill(d); } });
  });

  var qtext = document.getElementById("qfilter");
  var qclass = document.getElementById("qclass");
  var applyQuestions = function () {
    var t = qtext.value.toLowerCase();
    var c = qclass.value;
    questions.forEach(function (d) {
      var s = d.querySelector("summary").textContent.toLowerCase();
      d.hidden = (t !== "" && s.indexOf(t) < 0) || (c !== "" && !d.classList.contains(c));
    });
  };
  if (qtext && qclass) {
    qtext.addEventListener("input", applyQuestions);
    qclass.addEventListener("change", applyQuestions);
  }
})();
