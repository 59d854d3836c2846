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

  function scrollToEnd() {
    var end = document.getElementById("messages-end");
    if (end) end.scrollIntoView({ block: "end" });
  }

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
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail.elt;
    if (form.id === "composer" && e.detail.successful) {
      form.reset();
      var flash = document.getElementById("flash");
      if (flash) flash.innerHTML = "";
    }
  });

  document.addEventListener("htmx:afterSettle", function () { syncComposer(); scrollToEnd(); });
  document.addEventListener("htmx:sseMessage", scrollToEnd);
  document.addEventListener("htmx:sseClose", function () { setTimeout(syncComposer, 0); });
  document.addEventListener("DOMContentLoaded", function () { syncComposer(); scrollToEnd(); });
})();
