// chunksweep golden review: every text is inserted with textContent or text nodes, never as
// markup. Decisions: state per item ("accepted", "rejected" or undefined), with the edited
// question and answer; kept in localStorage under the file's SHA-256.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("review-data").textContent);
  var items = data.items;
  var storeKey = "chunksweep-review:" + data.sha256;
  var decisions = items.map(function (it) {
    return {
      state: it.raw && it.raw.reviewed === true ? "accepted" : undefined,
      question: it.question,
      answer: it.answer
    };
  });
  try {
    var saved = JSON.parse(window.localStorage.getItem(storeKey) || "null");
    if (saved && saved.length === items.length) { decisions = saved; }
  } catch (e) { /* no storage for this page: decisions last as long as the page */ }
  var current = 0;
  var editing = false;
  var $ = function (id) { return document.getElementById(id); };

  function save() {
    try { window.localStorage.setItem(storeKey, JSON.stringify(decisions)); } catch (e) { /* ignored */ }
  }

  function firstUndecided(from) {
    for (var k = 0; k < items.length; k++) {
      var i = (from + k) % items.length;
      if (!decisions[i].state) { return i; }
    }
    return -1;
  }

  function clear(el) { while (el.firstChild) { el.removeChild(el.firstChild); } }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }

  // The document around its spans: up to 600 characters either side, spans marked.
  function context(doc, spans) {
    var text = data.docs[doc];
    var from = Math.max(0, Math.min.apply(null, spans.map(function (s) { return s.start; })) - 600);
    var to = Math.min(text.length, Math.max.apply(null, spans.map(function (s) { return s.end; })) + 600);
    var pre = el("pre", undefined, "context");
    if (from > 0) { pre.appendChild(document.createTextNode("…")); }
    var at = from;
    spans.slice().sort(function (a, b) { return a.start - b.start; }).forEach(function (s) {
      var start = Math.max(s.start, at);
      pre.appendChild(document.createTextNode(text.slice(at, start)));
      var mark = el("mark", text.slice(start, s.end));
      mark.title = "evidence";
      pre.appendChild(mark);
      at = Math.max(at, s.end);
    });
    pre.appendChild(document.createTextNode(text.slice(at, to)));
    if (to < text.length) { pre.appendChild(document.createTextNode("…")); }
    return pre;
  }

  function progress() {
    var accepted = 0, rejected = 0;
    decisions.forEach(function (d) {
      if (d.state === "accepted") { accepted++; }
      if (d.state === "rejected") { rejected++; }
    });
    $("bar").max = items.length;
    $("bar").value = accepted + rejected;
    $("count").textContent = (accepted + rejected) + " of " + items.length + " reviewed (" +
      accepted + " accepted, " + rejected + " rejected)";
    var list = $("list");
    clear(list);
    items.forEach(function (it, i) {
      var a = el("a", it.id, "state-" + (decisions[i].state || "open") + (i === current ? " current" : ""));
      a.href = "#";
      a.addEventListener("click", function (ev) { ev.preventDefault(); show(i); });
      list.appendChild(a);
    });
  }

  function show(i) {
    if (!items.length) { $("meta").textContent = "The file holds no item."; progress(); return; }
    current = i;
    stopEditing();
    var it = items[i], d = decisions[i];
    var meta = $("meta");
    clear(meta);
    meta.appendChild(el("span", it.id + " (line " + it.line + ")", "id"));
    var raw = it.raw || {};
    if (raw.source) { meta.appendChild(el("span", "source: " + raw.source + (raw.model ? ", model " + raw.model : ""), "badge")); }
    meta.appendChild(el("span", d.state || "not reviewed", "badge state-" + (d.state || "open")));
    $("question").textContent = d.question;
    $("answer").textContent = d.answer;
    var problems = $("problems");
    clear(problems);
    it.problems.forEach(function (p) { problems.appendChild(el("li", p)); });
    var ev = $("evidence");
    clear(ev);
    var byDoc = {};
    it.spans.forEach(function (s) { (byDoc[s.doc] = byDoc[s.doc] || []).push(s); });
    Object.keys(byDoc).forEach(function (doc) {
      ev.appendChild(el("h3", doc));
      ev.appendChild(context(doc, byDoc[doc]));
    });
    if (!it.spans.length) { ev.appendChild(el("p", "No evidence located in the corpus.")); }
    progress();
  }

  function decide(state) {
    if (!items.length) { return; }
    decisions[current].state = state;
    save();
    var next = firstUndecided(current + 1);
    show(next < 0 ? current : next);
  }

  function startEditing() {
    if (!items.length) { return; }
    editing = true;
    $("question-edit").value = decisions[current].question;
    $("answer-edit").value = decisions[current].answer;
    ["question", "answer"].forEach(function (f) { $(f).hidden = true; $(f + "-edit").hidden = false; });
    $("save").hidden = false;
    $("question-edit").focus();
  }

  function stopEditing() {
    editing = false;
    ["question", "answer"].forEach(function (f) { $(f).hidden = false; $(f + "-edit").hidden = true; });
    $("save").hidden = true;
  }

  function saveEdit() {
    decisions[current].question = $("question-edit").value.trim();
    decisions[current].answer = $("answer-edit").value.trim();
    decide("accepted");
  }

  // The reviewed set: every line of the file but the rejected ones; accepted ones with
  // "reviewed": true and their (edited) question and answer.
  function reviewedJsonl() {
    var out = "";
    items.forEach(function (it, i) {
      var d = decisions[i];
      if (d.state === "rejected") { return; }
      var obj = JSON.parse(JSON.stringify(it.raw));
      if (d.state === "accepted") {
        if (d.question !== it.question) { obj["q" in obj && !("question" in obj) ? "q" : "question"] = d.question; }
        if (d.answer !== it.answer) { obj.answer = d.answer; }
        obj.reviewed = true;
      }
      out += JSON.stringify(obj) + "\n";
    });
    return out;
  }

  function download() {
    var blob = new Blob([reviewedJsonl()], { type: "application/x-ndjson" });
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = data.file.replace(/\.jsonl$/, "") + ".reviewed.jsonl";
    document.body.appendChild(a);
    a.click();
    document.body.removeChild(a);
  }

  $("accept").addEventListener("click", function () { decide("accepted"); });
  $("reject").addEventListener("click", function () { decide("rejected"); });
  $("edit").addEventListener("click", startEditing);
  $("save").addEventListener("click", saveEdit);
  $("prev").addEventListener("click", function () { show((current + items.length - 1) % items.length); });
  $("next").addEventListener("click", function () { show((current + 1) % items.length); });
  $("download").addEventListener("click", download);
  document.addEventListener("keydown", function (ev) {
    if (editing) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); saveEdit(); }
      if (ev.key === "Escape") { ev.preventDefault(); stopEditing(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var act = {
      a: function () { decide("accepted"); },
      r: function () { decide("rejected"); },
      e: startEditing,
      n: function () { show((current + 1) % items.length); },
      ArrowRight: function () { show((current + 1) % items.length); },
      p: function () { show((current + items.length - 1) % items.length); },
      ArrowLeft: function () { show((current + items.length - 1) % items.length); },
      d: download
    }[ev.key];
    if (act) { ev.preventDefault(); act(); }
  });
  window.chunksweepReview = { reviewedJsonl: reviewedJsonl };
  var start = firstUndecided(0);
  show(start < 0 ? 0 : start);
})();
