// report.html's behaviour: sort and filter the configuration table, filter the questions, and
// build a question's candidates (from its JSON block: chunks with the evidence marked, answer,
// verdicts) when it opens. Text is only ever set with createTextNode / textContent, never parsed
// as HTML.
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
  var el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  };
  // A chunk's text with the evidence marked (marks: "start-end-w", UTF-16 offsets).
  var chunkText = function (c) {
    var pre = el("pre", "ct");
    if (c.text === null) { pre.textContent = "(text not available)"; return pre; }
    var text = texts[c.text] || "";
    var pos = 0;
    c.marks.split(",").forEach(function (m) {
      if (m === "") { return; }
      var p = m.split("-");
      var a = Number(p[0]), b = Number(p[1]);
      pre.appendChild(document.createTextNode(text.slice(pos, a)));
      var mark = el("mark", p[2] === "1" ? "whole" : "cut", text.slice(a, b));
      mark.title = p[2] === "1" ? "evidence, whole in this chunk" : "evidence, cut by the chunk boundary";
      pre.appendChild(mark);
      pos = b;
    });
    pre.appendChild(document.createTextNode(text.slice(pos)));
    return pre;
  };
  var cell = function (c) {
    var box = el("div", "cand");
    box.appendChild(el("h4", null, c.config));
    box.appendChild(el("p", "meta", c.metrics));
    if (c.spans.length > 0) {
      var ul = el("ul", "spans");
      c.spans.forEach(function (s, i) {
        var li = el("li", null, "evidence " + (i + 1) + ": ");
        li.appendChild(el("span", "badge " + s.status, s.status));
        if (s.rank !== null) { li.appendChild(document.createTextNode(" in rank " + s.rank)); }
        if (s.text !== null) { li.appendChild(document.createTextNode(" ")); li.appendChild(el("q", null, s.text)); }
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
    if (c.answer !== null) {
      var p = el("p"); p.appendChild(el("b", null, "Answer")); box.appendChild(p);
      box.appendChild(el("div", "answer", c.answer));
    }
    if (c.verdicts.length > 0) {
      var vl = el("ul", "verdicts");
      c.verdicts.forEach(function (v) {
        var li = el("li");
        li.appendChild(el("span", "badge " + v.verdict, v.criterion + ": " + v.verdict));
        li.appendChild(document.createTextNode(" " + v.reason));
        vl.appendChild(li);
      });
      box.appendChild(vl);
    }
    if (c.cost !== null) { box.appendChild(el("p", "meta", c.cost)); }
    c.chunks.forEach(function (k) {
      var div = el("div", "chunk");
      var head = el("div", "head", "rank " + k.rank + " · ");
      head.appendChild(el("code", null, k.id));
      head.appendChild(document.createTextNode(" · score " + k.score));
      div.appendChild(head);
      div.appendChild(chunkText(k));
      box.appendChild(div);
    });
    return box;
  };
  var fill = function (details) {
    var box = details.querySelector(".cands");
    if (box.getAttribute("data-done")) { return; }
    JSON.parse(details.querySelector("script.qd").textContent).forEach(function (c) {
      box.appendChild(cell(c));
    });
    box.setAttribute("data-done", "1");
    box.querySelectorAll("pre.ct").forEach(function (pre) {
      var first = pre.querySelector("mark");
      if (first) { pre.scrollTop = Math.max(0, first.offsetTop - pre.offsetTop - 40); }
    });
  };
  // A link to a question (report.html#q-ID) opens it.
  var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (target && target.tagName === "DETAILS") { target.open = true; }
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
