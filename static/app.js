// Baton's little bit of JavaScript: keyboard handling and composer state.
// Everything else is htmx. No inline scripts (the CSP forbids them).
(function () {
  "use strict";

  // The composer is disabled while a reply streams: a streaming reply is an
  // element with data-streaming in the page.
  function syncComposer() {
    var form = document.getElementById("composer");
    if (!form) return;
    var busy = document.querySelector("[data-streaming]") !== null;
    form.querySelectorAll("textarea, button[type=submit]").forEach(function (el) { el.disabled = busy; });
    if (!busy && document.activeElement === document.body) {
      var ta = form.querySelector("textarea");
      if (ta) ta.focus();
    }
  }

  // New content scrolls into view only for a reader already at the end: a
  // person reading (or pinning) an older reply keeps their place.
  var followEnd = true;
  function nearEnd() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
  }
  function scrollToEnd() {
    var end = document.getElementById("messages-end");
    if (end && followEnd) end.scrollIntoView({ block: "end" });
  }
  document.addEventListener("htmx:beforeSwap", function () { followEnd = nearEnd(); });
  document.addEventListener("htmx:sseBeforeMessage", function () { followEnd = nearEnd(); });

  document.addEventListener("keydown", function (e) {
    var ta = e.target;
    if (!(ta instanceof HTMLTextAreaElement) || !ta.hasAttribute("data-enter-submits")) return;
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      if (ta.value.trim() !== "" && !ta.disabled) ta.form.requestSubmit();
    }
  });

  // After a successful send, empty the composer; after a failed one, keep
  // the text so that nothing typed is lost.
  document.addEventListener("submit", function (e) {
    if (e.target.id === "composer") followEnd = true;
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail.elt;
    if (e.detail.successful && form.classList && form.classList.contains("add")) form.reset();
    if (form.id === "composer" && e.detail.successful) {
      form.reset();
      var flash = document.getElementById("flash");
      if (flash) flash.innerHTML = "";
    }
  });

  // Review screen: every edit carries the handoff version this page last
  // saw, so that an edit based on stale content is refused (409).
  document.addEventListener("htmx:configRequest", function (e) {
    var v = document.getElementById("handoff-version");
    var elt = e.detail.elt;
    if (v && elt.closest && elt.closest("[data-handoff]") && !elt.querySelector("[data-base-version]")) {
      e.detail.parameters.version = v.value;
    }
  });

  // Escape cancels an inline edit.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var form = e.target.closest && e.target.closest("[data-edit-form]");
    if (!form) return;
    e.preventDefault();
    var cancel = form.querySelector("[data-cancel]");
    if (cancel) cancel.click();
  });

  // Focus: after an item is removed, the next item's Edit (or the add
  // field); after an item is saved or its edit cancelled, its Edit button.
  var focusAfterSwap = null;
  document.addEventListener("htmx:beforeRequest", function (e) {
    var pinned = e.detail.elt.closest && e.detail.elt.closest("form.pin");
    if (pinned) {
      // The message is replaced; keep focus on its pin button.
      focusAfterSwap = "#" + pinned.closest("article").id + " form.pin button";
      return;
    }
    var item = e.detail.elt.closest && e.detail.elt.closest("li.item");
    if (!item) { focusAfterSwap = null; return; }
    if (/\/delete$/.test(e.detail.requestConfig.path)) {
      var next = item.nextElementSibling || item.previousElementSibling;
      focusAfterSwap = next ? "#" + next.id + " [data-testid=edit]" : "#" + item.closest("section").querySelector("form.add input[type=text]").id;
    } else {
      focusAfterSwap = "#" + item.id + " [data-testid=edit]";
    }
  });

  document.addEventListener("htmx:afterSettle", function () {
    syncComposer();
    scrollToEnd();
    if (focusAfterSwap) {
      var el = document.querySelector(focusAfterSwap);
      focusAfterSwap = null;
      if (el && !document.activeElement.closest("[data-edit-form]")) el.focus();
    }
    var go = document.querySelector("[data-redirect]");
    if (go) window.location.assign(go.getAttribute("data-redirect"));
  });
  document.addEventListener("htmx:sseMessage", scrollToEnd);

  // "Copy as markdown": the source is in the element data-copy names.
  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("[data-copy]");
    if (!btn) return;
    var src = document.querySelector(btn.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.value || src.textContent).then(function () {
      var label = btn.textContent;
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = label; }, 1500);
    });
  });
  document.addEventListener("htmx:sseClose", function () { setTimeout(syncComposer, 0); });
  document.addEventListener("DOMContentLoaded", function () { syncComposer(); scrollToEnd(); });
})();
