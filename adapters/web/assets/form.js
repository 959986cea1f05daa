// Formward public form: focus the error summary (or the notice of a post that was not
// accepted), hint at missing answers before a round trip, show and hide fields by their
// display rules as answers change (the server applies the same rules to the post), hold the
// final post until the form's minimum fill time has passed (data-wait, in seconds: a fast
// respondent's answers, files included, never leave the page to be refused), solve the
// ALTCHA-compatible proof-of-work challenge before the form is sent, and report the first
// interaction with the page (a "start") once, in the background: a beacon with the page's
// render token, no cookie, nothing awaited.
(function () {
  "use strict";
  var copy = document.querySelector("[data-copy]");
  if (copy) copy.addEventListener("focus", function () { copy.select(); });
  var form = document.getElementById("fw-form");
  if (!form) return;
  var shown = Date.now();
  var wait = Number(form.getAttribute("data-wait")) || 0;
  var summary = document.getElementById("error-summary");
  var notice = document.getElementById("fw-notice");
  if (summary) summary.focus();
  else if (notice) notice.focus();

  // Recall: a <span data-recall="<field ID>"> in a label or help shows that field's answer
  // (drawn by the server); as the respondent answers, it follows. textContent only: an answer
  // is never markup.
  var spots = form.querySelectorAll("[data-recall]");
  function recall() {
    Array.prototype.forEach.call(spots, function (spot) {
      var els = form.querySelectorAll('[name="' + spot.getAttribute("data-recall") + '"]');
      if (!els.length) return;
      var vals = [];
      Array.prototype.forEach.call(els, function (el) {
        if (el.type === "radio" || el.type === "checkbox") {
          if (el.checked) vals.push(el.type === "checkbox" && el.value === "true" && els.length === 1 ? "Yes" : el.value);
        } else if (el.value) vals.push(el.value);
      });
      spot.textContent = vals.join(", ");
    });
  }
  if (spots.length) {
    form.addEventListener("input", recall);
    form.addEventListener("change", recall);
  }

  var started = false;
  function start() {
    if (started) return;
    started = true;
    form.removeEventListener("focusin", start);
    form.removeEventListener("input", start);
    var token = form.elements["_token"];
    if (!token || !token.value || !navigator.sendBeacon) return;
    try {
      var body = new URLSearchParams({_token: token.value});
      var page = form.elements["_page"];
      if (page && page.value) body.set("_page", page.value);
      navigator.sendBeacon(form.getAttribute("action") + "/start", body);
    } catch (e) { /* counting must never get in the respondent's way */ }
  }
  form.addEventListener("focusin", start);
  form.addEventListener("input", start);

  function hex(buf) {
    var b = new Uint8Array(buf), s = "";
    for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
    return s;
  }

  async function solve(ch) {
    var enc = new TextEncoder();
    for (var n = 0; n <= ch.maxnumber; n++) {
      var d = await crypto.subtle.digest("SHA-256", enc.encode(ch.salt + n));
      if (hex(d) === ch.challenge) {
        return btoa(JSON.stringify({algorithm: ch.algorithm, challenge: ch.challenge, number: n, salt: ch.salt, signature: ch.signature}));
      }
    }
    return "";
  }

  // On a form with languages the page gives its own words for the browser's checks
  // (data-msg-*), so the messages are in the page's language, not the browser's.
  function localMessage(el) {
    var d = form.dataset, v = el.validity;
    if (!d.msgInvalid) return "";
    if (v.valueMissing) return d.msgRequired;
    if (v.typeMismatch && el.type === "email") return d.msgEmail;
    if (v.badInput && el.type === "number") return d.msgNumber;
    return d.msgInvalid;
  }

  function hint(el) {
    var field = el.closest(".field");
    if (!field || field.querySelector(".field-error")) return;
    var p = document.createElement("p");
    p.className = "field-error";
    p.id = (el.id || el.name) + "-hint";
    p.textContent = localMessage(el) || el.validationMessage || "Please check this answer.";
    var help = field.querySelector(".field-help");
    var anchor = help || field.querySelector("legend") || field.querySelector("label");
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(p, anchor.nextSibling);
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", (help ? help.id + " " : "") + p.id);
  }

  // Display rules: {"any": bool, "c": [[field ID, operator, value, list]]}, as the server
  // evaluates them. A hidden field's inputs are disabled: not sent, not checked.
  var ruled = Array.prototype.slice.call(form.querySelectorAll("[data-show-if]"));
  function answer(id) {
    var items = [], single = null;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.name !== id || el.disabled) return;
      if (el.type === "checkbox" && el.closest(".single")) {
        single = el.checked ? "true" : "false";
      } else if (el.type === "checkbox" || el.type === "radio") {
        if (el.checked) items.push(el.value);
      } else if (el.value.trim() !== "") items.push(el.value.trim());
    });
    if (single !== null && !items.length) items.push(single);
    return items;
  }
  function num(s) { return s.trim() !== "" && isFinite(Number(s)) ? Number(s) : null; }
  function eq(a, b) { var x = num(a), y = num(b); return x !== null && y !== null ? x === y : a === b; }
  function cmp(a, b) {
    var x = num(a), y = num(b);
    if (x !== null) return y === null ? null : x - y;
    var d = /^\d{4}-\d{2}-\d{2}$/;
    return d.test(a) && d.test(b) ? (a < b ? -1 : a > b ? 1 : 0) : null;
  }
  function holds(c) {
    var items = answer(c[0]), op = c[1], v = c[2], list = c[3];
    if (!items.length) return op === "not_equals";
    if (op === "equals" || op === "not_equals") {
      var same = items.length === 1 && eq(items[0], v);
      return op === "equals" ? same : !same;
    }
    if (op === "contains") return list ? items.indexOf(v) >= 0 : items[0].indexOf(v) >= 0;
    if (list) return false;
    var r = cmp(items[0], v);
    return r !== null && (op === "greater_than" ? r > 0 : r < 0);
  }
  function applyRules() {
    ruled.forEach(function (el) {
      var rule = JSON.parse(el.getAttribute("data-show-if"));
      var results = rule.c.map(holds);
      var show = rule.any ? results.indexOf(true) >= 0 : results.indexOf(false) < 0;
      el.hidden = !show;
      Array.prototype.forEach.call(el.querySelectorAll("input,select,textarea"), function (i) { i.disabled = !show; });
    });
  }
  if (ruled.length) {
    applyRules();
    form.addEventListener("input", applyRules);
    form.addEventListener("change", applyRules);
  }

  // Save and resume (data-draft): a few seconds after the last change, the page's answers go
  // to the visit's draft in the background; the answer's resume token then travels with every
  // post, so page moves and the final post keep to the same draft. Files are not saved.
  var draftURL = form.getAttribute("data-draft");
  if (draftURL && window.fetch && window.URLSearchParams) {
    var timer = null, saving = false, again = false;
    var saveDraft = function () {
      timer = null;
      if (saving) { again = true; return; }
      var body = new URLSearchParams();
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || el.disabled || el.type === "file" || el.type === "submit" || el.name === "website") return;
        if ((el.type === "checkbox" || el.type === "radio") && !el.checked) return;
        body.append(el.name, el.value);
      });
      saving = true;
      fetch(draftURL, {method: "POST", body: body, credentials: "omit"}).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (out) {
        if (out && out.resume && form.elements["_resume"]) form.elements["_resume"].value = out.resume;
      }).catch(function () { /* the next page move saves too */ }).then(function () {
        saving = false;
        if (again) { again = false; saveDraft(); }
      });
    };
    var changed = function () {
      if (timer) clearTimeout(timer);
      timer = setTimeout(saveDraft, 3000);
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
  }

  var ready = false;
  form.addEventListener("submit", function (ev) {
    if (ready) return;
    if (ev.submitter && ev.submitter.name === "_switch") return; // another language: no checks
    var nav = ev.submitter && ev.submitter.name === "_nav" ? ev.submitter.value : "";
    if (nav === "back" || nav === "save") return;
    var invalid = Array.prototype.filter.call(form.elements, function (el) {
      return el.willValidate && !el.checkValidity();
    });
    if (invalid.length) {
      ev.preventDefault();
      invalid.forEach(hint);
      invalid[0].focus();
      return;
    }
    if (nav) return; // the next page; the fill time and the proof of work go with the final post
    var raw = form.getAttribute("data-pow");
    var pow = raw && window.crypto && crypto.subtle;
    var left = wait * 1000 - (Date.now() - shown);
    if (!pow && left <= 0) return;
    ev.preventDefault();
    var button = form.querySelector("button[type=submit]");
    var status = document.getElementById("fw-status");
    if (button) button.disabled = true;
    if (status) status.textContent = form.dataset.msgSending || (pow ? "Checking your browser…" : "Sending…");
    var work = pow ? solve(JSON.parse(raw)).then(function (payload) { form.elements["altcha"].value = payload; }) : null;
    var pause = new Promise(function (done) { setTimeout(done, Math.max(0, left)); });
    Promise.all([work, pause]).then(function () {
      ready = true;
      if (status) status.textContent = "";
      HTMLFormElement.prototype.submit.call(form);
    });
  });
})();
