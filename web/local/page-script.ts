/**
 * The local chat page's script (served as `/local/app.js`), plain ES2020 for the browser.
 *
 * - The person's name lives in localStorage (default "me"); their own messages are kept there too,
 *   because the server's mailbox only holds what Familiar said.
 * - A long-poll loop (`GET /api/local/messages?wait=25000`) brings new and edited messages and the
 *   typing state without reloads; it backs off after errors.
 * - Familiar's markdown is rendered with marked and sanitized with DOMPurify; without them the text
 *   is shown escaped. Nothing from the server is ever assigned to innerHTML unsanitized.
 * - Sends carry a clientMessageId (and presses a clientActionId) so a retried request is deduplicated.
 */
export const pageScript = String.raw`"use strict";
(function () {
  var NAME_KEY = "familiar.local.user";
  var OWN_KEY = "familiar.local.own.";
  var NAME_RE = /^[A-Za-z0-9_.@-]{1,64}$/;
  var OWN_LIMIT = 200;

  var list = document.getElementById("messages");
  var chat = list.parentElement;
  var empty = document.getElementById("empty");
  var typing = document.getElementById("typing");
  var statusLine = document.getElementById("status");
  var nameInput = document.getElementById("name");
  var nameHint = document.getElementById("name-hint");
  var composer = document.getElementById("composer");
  var textArea = document.getElementById("text");

  var user = readName();
  var cursor = "0";
  var generation = 0;
  var poller = null;

  function readName() {
    var saved = null;
    try { saved = localStorage.getItem(NAME_KEY); } catch (e) { saved = null; }
    return saved && NAME_RE.test(saved) ? saved : "me";
  }

  function newId() {
    if (window.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return b.toString(16).padStart(2, "0"); }).join("");
  }

  // ---- rendering -------------------------------------------------------------------------------

  var purifier = null;
  function sanitizer() {
    if (purifier || !window.DOMPurify || !window.marked) return purifier;
    purifier = window.DOMPurify;
    purifier.addHook("afterSanitizeAttributes", function (node) {
      if (node.tagName === "A") {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
    return purifier;
  }

  function renderMarkdown(bubble, text) {
    var purify = sanitizer();
    if (purify) {
      try {
        var html = window.marked.parse(text, { async: false, gfm: true, breaks: true });
        bubble.innerHTML = purify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input"] });
        // The page's CSP blocks remote images; show them as links instead of broken icons.
        bubble.querySelectorAll("img").forEach(function (img) {
          var link = document.createElement("a");
          link.href = img.getAttribute("src") || "#";
          link.target = "_blank";
          link.rel = "noopener noreferrer";
          link.textContent = "[image" + (img.alt ? ": " + img.alt : "") + "]";
          img.replaceWith(link);
        });
        bubble.classList.remove("plain");
        return;
      } catch (e) { /* fall back to plain text */ }
    }
    bubble.textContent = text;
    bubble.classList.add("plain");
  }

  function timeLabel(at) {
    return new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function nearBottom() {
    return chat.scrollHeight - chat.scrollTop - chat.clientHeight < 80;
  }

  function place(item, at) {
    item.dataset.at = String(at);
    var next = null;
    for (var i = list.children.length - 1; i >= 0; i--) {
      var other = list.children[i];
      if (Number(other.dataset.at) <= at) break;
      next = other;
    }
    list.insertBefore(item, next);
    empty.hidden = true;
  }

  function showOwn(entry) {
    var stick = nearBottom();
    var item = document.createElement("li");
    item.className = "msg me";
    var bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.textContent = entry.text;
    var meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = timeLabel(entry.at);
    item.append(bubble, meta);
    place(item, entry.at);
    if (stick) chat.scrollTop = chat.scrollHeight;
    return meta;
  }

  function showFamiliar(message) {
    var stick = nearBottom();
    var item = list.querySelector('li[data-id="' + CSS.escape(message.id) + '"]');
    var fresh = !item;
    if (fresh) {
      item = document.createElement("li");
      item.className = "msg them";
      item.dataset.id = message.id;
    }
    item.replaceChildren();
    var bubble = document.createElement("div");
    bubble.className = "bubble";
    // An approval card is drawn from its structured view (card.js); its text is the fallback.
    var card = message.card && window.FamiliarCard ? window.FamiliarCard.render(message.card) : null;
    item.classList.toggle("card-msg", !!card);
    if (card) bubble.append(card);
    else renderMarkdown(bubble, message.text);
    item.append(bubble);
    if (message.attachments && message.attachments.length) item.append(renderAttachments(message.attachments));
    if (message.buttons && message.buttons.length) item.append(renderButtons(message));
    var meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = "Familiar · " + timeLabel(message.at);
    item.append(meta);
    if (fresh) place(item, Date.parse(message.at));
    if (stick) chat.scrollTop = chat.scrollHeight;
  }

  // Attachments: images shown inline, other files as download links (served by the local API only).
  function renderAttachments(attachments) {
    var box = document.createElement("div");
    box.className = "attachments";
    attachments.forEach(function (a) {
      var link = document.createElement("a");
      link.href = a.url;
      link.target = "_blank";
      link.rel = "noopener";
      if (/^image\/(png|jpeg|gif|webp)$/.test(a.mimeType)) {
        var img = document.createElement("img");
        img.src = a.url;
        img.alt = a.name;
        img.style.maxWidth = "100%";
        img.style.borderRadius = "8px";
        link.append(img);
      } else {
        link.textContent = "📎 " + a.name + " (" + Math.max(1, Math.round(a.size / 1024)) + " KB)";
      }
      box.append(link);
    });
    return box;
  }

  function renderButtons(message) {
    var group = document.createElement("div");
    group.className = "buttons";
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", "Answer");
    var styles = {};
    if (message.card) message.card.buttons.forEach(function (b) { styles[b.id] = b.style; });
    message.buttons.forEach(function (b) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = b.label;
      if (styles[b.id]) button.className = styles[b.id];
      button.addEventListener("click", function () { press(message.id, b.id, group, button); });
      group.append(button);
    });
    return group;
  }

  // ---- own messages kept locally ---------------------------------------------------------------

  function ownLog() {
    try { return JSON.parse(localStorage.getItem(OWN_KEY + user) || "[]"); } catch (e) { return []; }
  }

  function remember(entry) {
    var log = ownLog();
    log.push(entry);
    try { localStorage.setItem(OWN_KEY + user, JSON.stringify(log.slice(-OWN_LIMIT))); } catch (e) { /* full: keep going */ }
  }

  // ---- talking to the API ----------------------------------------------------------------------

  function postJson(path, body) {
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (data) { return { ok: res.ok, status: res.status, data: data }; });
      });
  }

  function sendWithRetry(body, attempt) {
    return postJson("/api/local/messages", body).then(function (r) {
      if (r.status >= 500 && attempt < 3) return delay(1000 * attempt).then(function () { return sendWithRetry(body, attempt + 1); });
      return r;
    }, function (err) {
      if (attempt < 3) return delay(1000 * attempt).then(function () { return sendWithRetry(body, attempt + 1); });
      throw err;
    });
  }

  function send(text) {
    var entry = { text: text, at: Date.now() };
    remember(entry);
    var meta = showOwn(entry);
    sendWithRetry({ user: user, text: text, clientMessageId: newId() }, 1).then(function (r) {
      if (!r.ok) fail(meta, (r.data && r.data.error) || "Not sent (" + r.status + ")");
      else if (r.data && r.data.notice) setStatus(r.data.notice, "info");
    }, function () { fail(meta, "Not sent: Familiar is not reachable"); });
  }

  function fail(meta, text) {
    meta.textContent = text;
    meta.classList.add("error");
  }

  function press(messageId, buttonId, group, button) {
    var buttons = group.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    button.classList.add("chosen");
    button.setAttribute("aria-pressed", "true");
    postJson("/api/local/actions", { user: user, messageId: messageId, buttonId: buttonId, clientActionId: newId() }).then(function (r) {
      if (r.ok) {
        if (r.data && r.data.notice) setStatus(r.data.notice, "info");
        return;
      }
      setStatus((r.data && r.data.error) || "The answer was not taken (" + r.status + ")");
      if (r.status >= 500) reenable(buttons, button);
    }, function () {
      setStatus("The answer was not sent: Familiar is not reachable.");
      reenable(buttons, button);
    });
  }

  function reenable(buttons, button) {
    buttons.forEach(function (b) { b.disabled = false; });
    button.classList.remove("chosen");
    button.removeAttribute("aria-pressed");
  }

  function setStatus(text, kind) {
    statusLine.textContent = text;
    statusLine.classList.toggle("info", kind === "info");
  }

  function delay(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

  function poll(gen) {
    var backoff = 1000;
    function loop() {
      if (gen !== generation) return;
      var controller = new AbortController();
      poller = controller;
      var url = "/api/local/messages?user=" + encodeURIComponent(user) + "&after=" + encodeURIComponent(cursor) + "&wait=25000&typing=" + (typing.hidden ? "0" : "1");
      fetch(url, { signal: controller.signal, cache: "no-store" })
        .then(function (res) {
          return res.json().then(function (data) {
            if (!res.ok) throw new Error(data.error || "HTTP " + res.status);
            return data;
          });
        })
        .then(function (data) {
          if (gen !== generation) return;
          data.messages.forEach(showFamiliar);
          cursor = data.cursor;
          typing.hidden = !data.typing;
          if (statusLine.dataset.kind === "poll") { setStatus(""); delete statusLine.dataset.kind; }
          backoff = 1000;
          loop();
        })
        .catch(function (err) {
          if (gen !== generation) return;
          setStatus("Reconnecting… (" + (err && err.message ? err.message : "connection lost") + ")");
          statusLine.dataset.kind = "poll";
          typing.hidden = true;
          setTimeout(loop, backoff);
          backoff = Math.min(backoff * 2, 15000);
        });
    }
    loop();
  }

  function switchUser(name) {
    user = name;
    generation += 1;
    if (poller) poller.abort();
    cursor = "0";
    list.replaceChildren();
    empty.hidden = false;
    typing.hidden = true;
    nameInput.value = user;
    ownLog().forEach(showOwn);
    poll(generation);
  }

  // ---- wiring ----------------------------------------------------------------------------------

  document.getElementById("who").addEventListener("submit", function (e) {
    e.preventDefault();
    nameInput.blur();
  });
  nameInput.addEventListener("change", function () {
    var name = nameInput.value.trim();
    if (!NAME_RE.test(name)) {
      nameInput.setAttribute("aria-invalid", "true");
      nameHint.textContent = "Use 1–64 letters, digits or _ . @ -";
      return;
    }
    nameInput.removeAttribute("aria-invalid");
    nameHint.textContent = "";
    try { localStorage.setItem(NAME_KEY, name); } catch (err) { /* private mode: not remembered */ }
    if (name !== user) switchUser(name);
  });

  composer.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = textArea.value;
    if (!text.trim()) return;
    textArea.value = "";
    autosize();
    send(text);
  });
  textArea.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      composer.requestSubmit();
    }
  });
  function autosize() {
    textArea.style.height = "auto";
    textArea.style.height = Math.min(textArea.scrollHeight + 2, 160) + "px";
    textArea.style.overflowY = textArea.scrollHeight > 160 ? "auto" : "hidden";
  }
  textArea.addEventListener("input", autosize);

  switchUser(user);
  autosize();
  textArea.focus();
})();
`;
