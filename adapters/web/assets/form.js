// Formward public form: focus the error summary, hint at missing answers before a round trip,
// and solve the ALTCHA-compatible proof-of-work challenge before the form is sent.
(function () {
  "use strict";
  var form = document.getElementById("fw-form");
  if (!form) return;
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();

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

  function hint(el) {
    var field = el.closest(".field");
    if (!field || field.querySelector(".field-error")) return;
    var p = document.createElement("p");
    p.className = "field-error";
    p.id = (el.id || el.name) + "-hint";
    p.textContent = el.validationMessage || "Please check this answer.";
    var anchor = field.querySelector("legend") || field.querySelector("label");
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(p, anchor.nextSibling);
    el.setAttribute("aria-invalid", "true");
    el.setAttribute("aria-describedby", p.id);
  }

  var solved = false;
  form.addEventListener("submit", function (ev) {
    if (solved) return;
    var invalid = Array.prototype.filter.call(form.elements, function (el) {
      return el.willValidate && !el.checkValidity();
    });
    if (invalid.length) {
      ev.preventDefault();
      invalid.forEach(hint);
      invalid[0].focus();
      return;
    }
    var raw = form.getAttribute("data-pow");
    if (!raw || !window.crypto || !crypto.subtle) return;
    ev.preventDefault();
    var button = form.querySelector("button[type=submit]");
    var status = document.getElementById("fw-pow-status");
    if (button) button.disabled = true;
    if (status) status.textContent = "Checking your browser…";
    solve(JSON.parse(raw)).then(function (payload) {
      form.elements["altcha"].value = payload;
      solved = true;
      if (status) status.textContent = "";
      HTMLFormElement.prototype.submit.call(form);
    });
  });
})();
