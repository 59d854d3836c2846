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

  // The chat follows new content (a sent message, a streaming reply) while
  // the reader is at the end of the page. Scrolling up stops following and
  // shows "Jump to latest"; scrolling back to the end, or the button,
  // follows again. Only the reader moving up stops it: content growing
  // under a still page does not. autoTop is where the last automatic scroll
  // left the page (-1: nowhere yet); being above it means the reader moved
  // up, even before the browser has fired the scroll event for it.
  var followEnd = true;
  var autoTop = -1;
  function atEnd() {
    var doc = document.documentElement;
    return doc.scrollHeight - (window.scrollY + window.innerHeight) <= 48;
  }
  function syncJump() {
    var jump = document.getElementById("jump-latest");
    if (jump) jump.hidden = followEnd || atEnd();
  }
  function scrollToEnd() {
    if (!document.getElementById("messages-end")) return;
    if (followEnd && autoTop >= 0 && window.scrollY < autoTop - 4) followEnd = false;
    if (followEnd) {
      window.scrollTo({ top: document.documentElement.scrollHeight, behavior: "instant" });
      autoTop = window.scrollY;
    }
    syncJump();
  }
  window.addEventListener("scroll", function () {
    if (atEnd()) {
      followEnd = true;
      autoTop = window.scrollY;
    } else if (window.scrollY < autoTop - 4) {
      followEnd = false;
    }
    syncJump();
  }, { passive: true });
  document.addEventListener("click", function (e) {
    if (!e.target.closest || !e.target.closest("#jump-latest")) return;
    followEnd = true;
    autoTop = -1;
    scrollToEnd();
    var ta = document.querySelector("#composer textarea");
    if (ta && !ta.disabled) ta.focus({ preventScroll: true });
  });

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
    if (e.target.id === "composer") { followEnd = true; autoTop = -1; }
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail.elt;
    if (e.detail.successful && form.classList && form.classList.contains("add")) form.reset();
    if (form.id === "composer" && e.detail.successful) {
      form.reset();
      var flash = document.getElementById("flash");
      if (flash) flash.innerHTML = "";
      var err = document.getElementById("composer-error");
      if (err) err.innerHTML = "";
    }
  });

  // A failed send says why next to the composer, where the person is
  // looking, not at the top of a long thread; the draft stays.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var err = document.getElementById("composer-error");
    if (!err || !e.detail.isError || e.detail.requestConfig.elt.id !== "composer") return;
    e.detail.shouldSwap = true;
    e.detail.target = err;
  });
  document.addEventListener("htmx:sendError", function (e) {
    var err = document.getElementById("composer-error");
    if (!err || e.detail.requestConfig.elt.id !== "composer") return;
    err.textContent = "Baton could not be reached, so nothing was sent. Check the connection and press Send again.";
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

  // Review screen: decision labels are positions (D1, D2…), so after an
  // item is removed or added every label is derived again from the list.
  function renumberDecisions() {
    document.querySelectorAll("#decisions > li").forEach(function (li, i) {
      var label = "D" + (i + 1);
      var el = li.querySelector("[data-testid=label]");
      if (el) el.textContent = label;
      var sr = li.querySelector("label.sr-only");
      if (sr && /^Decision /.test(sr.textContent)) sr.textContent = "Decision " + label;
    });
  }

  document.addEventListener("htmx:afterSettle", function () {
    renumberDecisions();
    syncComposer();
    scrollToEnd();
    if (focusAfterSwap) {
      var el = document.querySelector(focusAfterSwap);
      focusAfterSwap = null;
      // Only when the focus went with the swapped item: a person who has
      // moved on (typing in another field, an edit form) keeps their place.
      var a = document.activeElement;
      if (el && (!a || a === document.body || !a.isConnected)) el.focus();
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

  // Pinning: a decision is one sentence. Pin opens a small editor on the
  // text selected in that reply, or else on the reply's first sentence
  // (the form's content field); Enter pins it, Escape cancels. Selecting
  // text in a reply offers "Pin as decision" next to the selection.
  var selectedText = { article: null, text: "" };
  function selectionInReply() {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || sel.rangeCount === 0) return null;
    var text = sel.toString().replace(/\s+/g, " ").trim();
    if (!text) return null;
    var node = sel.getRangeAt(0).commonAncestorContainer;
    var el = node.nodeType === 1 ? node : node.parentElement;
    var body = el && el.closest(".msg.assistant .body");
    var article = body && body.closest("article");
    if (!article || !article.querySelector("form[data-pin-form]")) return null;
    return { article: article, text: text, range: sel.getRangeAt(0) };
  }
  function pinSelectionButton() {
    var btn = document.getElementById("pin-selection");
    if (!btn) {
      btn = document.createElement("button");
      btn.type = "button";
      btn.id = "pin-selection";
      btn.className = "pin-selection primary";
      btn.setAttribute("data-testid", "pin-selection");
      btn.textContent = "Pin as decision";
      btn.hidden = true;
      document.body.appendChild(btn);
    }
    return btn;
  }
  document.addEventListener("selectionchange", function () {
    var found = selectionInReply();
    var btn = document.getElementById("pin-selection");
    if (!found) {
      if (btn && document.activeElement !== btn) btn.hidden = true;
      return;
    }
    selectedText = { article: found.article, text: found.text };
    btn = pinSelectionButton();
    var rect = found.range.getBoundingClientRect();
    btn.style.top = (window.scrollY + rect.bottom + 6) + "px";
    btn.style.left = Math.max(8, window.scrollX + rect.left) + "px";
    btn.hidden = false;
  });
  document.addEventListener("click", function (e) {
    if (!e.target.closest) return;
    if (e.target.closest("#pin-selection")) {
      e.target.closest("#pin-selection").hidden = true;
      if (selectedText.article) openPinEditor(selectedText.article, selectedText.text);
      return;
    }
    var btn = e.target.closest("form[data-pin-form] button[type=submit]");
    if (!btn || btn.form.hasAttribute("data-pin-confirmed")) return;
    e.preventDefault();
    var article = btn.closest("article");
    var found = selectionInReply();
    var text = found && found.article === article ? found.text : "";
    if (!text && selectedText.article === article) text = selectedText.text;
    openPinEditor(article, text);
  }, true);

  function openPinEditor(article, text) {
    var form = article.querySelector("form[data-pin-form]");
    if (!form) return;
    var old = article.querySelector(".pin-editor");
    if (old) old.remove();
    var id = "pin-edit-" + article.id;
    var box = document.createElement("div");
    box.className = "pin-editor";
    box.setAttribute("data-testid", "pin-editor");
    var label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Pin as decision";
    var ta = document.createElement("textarea");
    ta.id = id;
    ta.rows = 2;
    ta.maxLength = 2000;
    ta.setAttribute("data-testid", "pin-editor-input");
    ta.value = text || form.querySelector("[data-pin-content]").value;
    var row = document.createElement("div");
    row.className = "row";
    var save = document.createElement("button");
    save.type = "button";
    save.className = "primary";
    save.textContent = "Pin";
    save.setAttribute("data-testid", "pin-save");
    var cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    cancel.setAttribute("data-testid", "pin-cancel");
    var hint = document.createElement("span");
    hint.className = "hint";
    hint.textContent = "Enter pins · Esc cancels";
    row.append(save, cancel, hint);
    box.append(label, ta, row);
    article.querySelector(".who").after(box);
    ta.focus();
    ta.select();

    function close() {
      box.remove();
      var b = form.querySelector("button[type=submit]");
      if (b) b.focus();
    }
    function submit() {
      var value = ta.value.replace(/\s+/g, " ").trim();
      if (!value) { ta.focus(); return; }
      form.querySelector("[data-pin-content]").value = value;
      form.setAttribute("data-pin-confirmed", "");
      window.getSelection().removeAllRanges();
      form.requestSubmit();
    }
    save.addEventListener("click", submit);
    cancel.addEventListener("click", close);
    ta.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
      if (e.key === "Escape") { e.preventDefault(); close(); }
    });
  }
  document.addEventListener("DOMContentLoaded", function () { syncComposer(); scrollToEnd(); });
})();
