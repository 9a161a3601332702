/*
 * Chain Designer: verdict and signal boxes checked while they are typed in.
 *
 * The server marks a checked box with data-check="verdict" or "signal" and
 * puts an <output class="check" for="<box id>"> after it; a verdict builder
 * is a fieldset[data-check="verdict-parts"] holding verdict_<part> boxes and
 * one output.check (templates/chains/_verdict_builder.html). On input, and
 * once when a box is first focused, this asks the chain's check URL
 * (data-check-url on #workspace; chains/views/checks.py) and shows its answer
 * in the output: what the text reads as and what the run does, or what is
 * wrong. A builder shows only the parts its type takes (label[data-for]).
 * The forms work without it: the save refuses the same mistakes beside the
 * box. No inline handlers; events are delegated from the document.
 */
(function () {
  "use strict";

  var DELAY = 250;
  var timers = new WeakMap();

  function checkUrl() {
    var workspace = document.getElementById("workspace");
    return workspace && workspace.dataset.checkUrl;
  }

  function ask(output, params) {
    var url = checkUrl();
    if (!url || !output) return;
    var query = new URLSearchParams(params).toString();
    if (output.dataset.asked === query) return;
    output.dataset.asked = query;
    fetch(url + "?" + query, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : ""; })
      .then(function (html) {
        // A later question may have been asked meanwhile: only its answer is shown.
        if (output.dataset.asked === query) output.innerHTML = html;
      })
      .catch(function () {});
  }

  function builderParams(builder) {
    var params = { what: "verdict-parts" };
    builder.querySelectorAll("[name^='verdict_']").forEach(function (box) {
      params[box.name.replace("verdict_", "")] = box.value;
    });
    return params;
  }

  function showParts(builder) {
    var type = builder.querySelector("[name='verdict_type']");
    var chosen = type ? type.value : "";
    builder.querySelectorAll("label[data-for]").forEach(function (label) {
      label.hidden = label.dataset.for.split(" ").indexOf(chosen) < 0;
      var help = label.nextElementSibling; // its "?" (Helped)
      if (help && help.classList.contains("term")) help.hidden = label.hidden;
    });
  }

  function check(box) {
    var builder = box.closest("[data-check='verdict-parts']");
    if (builder) {
      showParts(builder);
      ask(builder.querySelector("output.check"), builderParams(builder));
      return;
    }
    if (!box.dataset.check || !box.id) return;
    var output = document.querySelector("output.check[for='" + box.id + "']");
    ask(output, { what: box.dataset.check, value: box.value });
  }

  function later(event) {
    var box = event.target;
    if (!box.matches || !box.matches("[data-check], [data-check='verdict-parts'] [name]")) return;
    clearTimeout(timers.get(box));
    timers.set(box, setTimeout(function () { check(box); }, DELAY));
  }

  document.addEventListener("input", later);
  document.addEventListener("change", later);
  document.addEventListener("focusin", function (event) {
    var box = event.target;
    if (box.matches && box.matches("[data-check]") && box.value) check(box);
  });

  htmx.onLoad(function (element) {
    if (!element.querySelectorAll) return;
    element.querySelectorAll("[data-check='verdict-parts']").forEach(function (builder) {
      showParts(builder);
      var type = builder.querySelector("[name='verdict_type']");
      if (type && type.value) ask(builder.querySelector("output.check"), builderParams(builder));
    });
  });
})();
