/*
 * Chain Designer workspace forms: focus where the next thing is typed.
 *
 * The forms work without it: the server renders an adder open, with
 * `autofocus` on the id box of the form just used (or on the first field of a
 * refused form), after every add. This file only moves the caret there after
 * an htmx swap (a swapped-in `autofocus` is not applied by the browser) and
 * into the first box of an adder the user opens, and after a refused save
 * scrolls the error beside the field into view. It assumes the markup of
 * templates/chains/workspace.html (details.adders, details.add-gate). No
 * inline handlers; events are delegated from the document.
 */
(function () {
  "use strict";

  var ADDERS = "details.adders, details.add-gate, details.add-row";
  var FIRST = "input:not([type=hidden]):not([type=checkbox]), select, textarea";

  // toggle does not bubble: listen in the capture phase.
  document.addEventListener(
    "toggle",
    function (event) {
      var details = event.target;
      if (!details.matches || !details.matches(ADDERS) || !details.open) return;
      // The toggle event comes a moment after the adder opens: a box the person has
      // moved into by then keeps the caret (it once took "late_token" typed into
      // the handle id and put it in the action id).
      var active = document.activeElement;
      if (active && details.contains(active) && !active.matches("summary")) return;
      var form = details.querySelector("form");
      var first = form && form.querySelector(FIRST);
      if (first) first.focus();
    },
    true
  );

  htmx.onLoad(function (element) {
    if (!element.querySelector) return;
    var wanted = element.querySelector("[autofocus]");
    if (wanted && wanted.offsetParent !== null) wanted.focus();
    // A refused save: show the reason beside the field it names (the last
    // field-error of the form), not wherever the page happened to scroll.
    var errors = element.querySelectorAll("form .field-error");
    var shown = errors.length ? errors[errors.length - 1] : null;
    if (shown && shown.offsetParent !== null) shown.scrollIntoView({ block: "center" });
  });
})();
