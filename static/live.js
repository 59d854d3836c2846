// Live review: keeps a handoff's page in step with what teammates do, over
// one event stream (data-live-url on #viewers). On "changed" it fetches
// the page again and replaces the parts that changed, leaving alone
// whatever a person is typing in; "viewers" shows who else is here.
(function () {
  "use strict";
  var box = document.getElementById("viewers");
  if (!box || !window.EventSource) return;
  var url = box.getAttribute("data-live-url");

  // A part is busy while a person types in it: focus inside, or a field
  // whose value differs from what the server sent.
  function busy(el) {
    if (el.contains(document.activeElement) && document.activeElement !== document.body) {
      var a = document.activeElement;
      if (a.matches("textarea, input[type=text], select")) return true;
    }
    var fields = el.querySelectorAll("textarea, input[type=text]");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value !== fields[i].defaultValue) return true;
    }
    return el.querySelector(".editing, [data-edit-form]") !== null && el.classList.contains("item");
  }

  // focusKey names the focused element inside el, so that its twin in a
  // replacement can take the focus back.
  function focusKey(el) {
    var a = document.activeElement;
    if (!a || a === document.body || !el.contains(a)) return null;
    if (a.id) return "#" + CSS.escape(a.id);
    var t = a.getAttribute("data-testid");
    return t ? "[data-testid=\"" + t + "\"]" : null;
  }

  function restoreFocus(el, key) {
    if (!key) return;
    var f = el.matches(key) ? el : el.querySelector(key);
    if (f) f.focus({ preventScroll: true });
  }

  function swap(old, fresh) {
    if (!old || !fresh || old.isEqualNode(fresh) || busy(old)) return;
    var key = focusKey(old);
    var copy = document.importNode(fresh, true);
    old.replaceWith(copy);
    if (window.htmx) htmx.process(copy);
    restoreFocus(copy, key);
  }

  // Lists of items: keep the order of the fresh page; an item being
  // edited stays as it is, so the person's draft survives.
  function reconcileList(old, fresh) {
    if (!old || !fresh) return;
    var keep = {};
    Array.prototype.forEach.call(old.children, function (el) { if (el.id) keep[el.id] = el; });
    var next = [];
    Array.prototype.forEach.call(fresh.children, function (f) {
      var o = f.id && keep[f.id];
      if (o && (o.classList.contains("editing") || busy(o) || o.isEqualNode(f))) {
        next.push(o);
      } else {
        var copy = document.importNode(f, true);
        next.push(copy);
      }
      if (o) delete keep[f.id];
    });
    // Removed by someone else, unless being edited here.
    Object.keys(keep).forEach(function (id) {
      if (keep[id].classList.contains("editing")) next.push(keep[id]);
    });
    var changed = next.length !== old.children.length;
    for (var i = 0; !changed && i < next.length; i++) changed = next[i] !== old.children[i];
    if (!changed) return;
    var focused = null, key = null;
    next.forEach(function (el) {
      if (el.parentNode === old) return;
      var o = document.getElementById(el.id);
      if (o && focusKey(o)) { focused = el; key = focusKey(o); }
    });
    // Open threads stay open: carry the slot's content over.
    next.forEach(function (el) {
      if (el.parentNode === old) return;
      var o = document.getElementById(el.id);
      if (!o) return;
      var slot = o.querySelector(".thread-slot"), nslot = el.querySelector(".thread-slot");
      if (slot && nslot && slot.childNodes.length) nslot.replaceWith(slot);
    });
    // Moving a node takes the focus away from what it holds: give it back.
    var active = document.activeElement;
    old.replaceChildren.apply(old, next);
    next.forEach(function (el) { if (window.htmx) htmx.process(el); });
    if (active && active !== document.body && active.isConnected) active.focus({ preventScroll: true });
    else if (focused) restoreFocus(focused, key);
  }

  // Forms that carry the handoff version keep the one they were built
  // from while edited: a save then meets a conflict instead of
  // overwriting a teammate's change.
  function pinEditVersions() {
    document.querySelectorAll("li.item.editing form").forEach(function (f) {
      var v = f.querySelector("input[name=version]");
      if (v && !f.querySelector("[data-base-version]")) v.setAttribute("data-base-version", "");
    });
  }

  // Responses can arrive out of order: only the latest request's answer is
  // applied, so an older page never overwrites a newer one.
  var pending = null;
  var latest = 0;
  function schedule() {
    if (!pending) pending = setTimeout(refresh, 100);
  }
  // The page's own writes (htmx, not GET) swap in their answers: an item
  // added, removed or edited, with the counts. A refresh fetched before
  // such an answer is swapped in may hold the page as it was before the
  // write, or hold the write's result too (the answer would then add an
  // item twice): while a write is under way no refresh answer is applied,
  // any in flight is dropped, and the page refreshes once after it.
  var writes = 0;
  function isWrite(e) {
    var cfg = e.detail && e.detail.requestConfig;
    return cfg && cfg.verb && cfg.verb.toLowerCase() !== "get";
  }
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (!isWrite(e)) return;
    writes++;
    latest++;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (!isWrite(e)) return;
    writes = Math.max(0, writes - 1);
    schedule();
  });
  function refresh() {
    pending = null;
    if (writes > 0) return; // the write's end refreshes
    var mine = ++latest;
    fetch(window.location.pathname + window.location.search, { credentials: "same-origin", headers: { "X-Live": "1" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html || mine !== latest || writes > 0) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        pinEditVersions();
        ["decisions", "files", "risks"].forEach(function (id) {
          reconcileList(document.getElementById(id), doc.getElementById(id));
        });
        document.querySelectorAll("[data-live][id], #summary, #handoff-status, #review-footer, .count[id], #plans-list").forEach(function (el) {
          swap(el, doc.getElementById(el.id));
        });
        var v = document.getElementById("handoff-version"), nv = doc.getElementById("handoff-version");
        if (v && nv) v.value = nv.value;
        // Tests (and anyone curious) can tell that a refresh has landed.
        document.body.setAttribute("data-live-applied", String(mine));
        // Open threads: fetch their lists again.
        document.querySelectorAll(".thread-list[data-src]").forEach(function (list) {
          if (busy(list)) return;
          htmx.ajax("GET", list.getAttribute("data-src"), { target: "#" + list.id, swap: "outerHTML" });
        });
      });
  }

  var es = new EventSource(url);
  es.addEventListener("changed", schedule);
  // A stream that comes back after a drop missed what changed meanwhile.
  var opened = false;
  es.addEventListener("open", function () {
    if (opened) schedule();
    opened = true;
  });
  es.addEventListener("viewers", function (e) { box.innerHTML = e.data; });

  // A comment sent: empty its form. A guest's name is remembered.
  document.addEventListener("htmx:afterRequest", function (e) {
    var f = e.detail.elt;
    if (!e.detail.successful || !f.matches || !f.matches("[data-comment-form]")) return;
    var name = f.querySelector("[data-guest-name]");
    if (name) try { localStorage.setItem("baton-guest-name", name.value); } catch (_) {}
    var body = f.querySelector("textarea");
    if (body) { body.value = ""; body.defaultValue = ""; }
  });
  document.addEventListener("htmx:afterSettle", function () {
    var saved = null;
    try { saved = localStorage.getItem("baton-guest-name"); } catch (_) {}
    if (!saved) return;
    document.querySelectorAll("[data-guest-name]").forEach(function (el) { if (!el.value) el.value = saved; });
  });
})();
