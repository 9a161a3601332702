/*
 * Chain Designer workspace: nothing scrolled away by a swap.
 *
 * htmx replaces the whole #workspace after every edit and selection (see
 * workspace.js), which would put every scrolled box inside it (the side
 * panel's tab body, the table, the lint list) back at the top. Just before a
 * swap of #workspace this records the scroll position of each scrolled box,
 * named by the nearest ancestor id and its own tag and classes (a tab body's
 * id names its tab, so a new tab starts at the top), and the page's own
 * position; as soon as the new content is in (htmx:afterSwap, before htmx
 * settles it and fires htmx:load some 20 ms later, a moment in which the
 * boxes would show their top) it puts them back on the boxes that match.
 * The one exception is a refused stale save: its answer (#stale-edit,
 * "yours" beside "theirs") sits at the top and is scrolled into sight. No
 * inline handlers and no eval, for the Content-Security-Policy.
 */
(function () {
  "use strict";

  var kept = null; // { page: [x, y], boxes: [{ selector, top, left }] } across one swap

  function selectorOf(el, root) {
    var own = el.id
      ? "#" + CSS.escape(el.id)
      : el.tagName.toLowerCase() +
        Array.prototype.map
          .call(el.classList, function (c) {
            return "." + CSS.escape(c);
          })
          .join("");
    if (el.id || el === root) return own;
    var named = el.parentElement && el.parentElement.closest("[id]");
    return named && root.contains(named) ? "#" + CSS.escape(named.id) + " " + own : own;
  }

  function record(event) {
    var target = event.detail.target;
    if (!target || target.id !== "workspace" || !event.detail.shouldSwap) return;
    var boxes = [];
    target.querySelectorAll("*").forEach(function (el) {
      if (el.scrollTop > 0 || el.scrollLeft > 0) {
        boxes.push({ selector: selectorOf(el, target), top: el.scrollTop, left: el.scrollLeft });
      }
    });
    kept = { page: [window.scrollX, window.scrollY], boxes: boxes };
  }

  function restore(element) {
    var ws = document.getElementById("workspace");
    if (!kept || !ws || !(element === ws || element.contains(ws))) return;
    var was = kept;
    kept = null;
    was.boxes.forEach(function (box) {
      var el = ws.querySelector(box.selector);
      if (el) {
        el.scrollTop = box.top;
        el.scrollLeft = box.left;
      }
    });
    if (window.scrollX !== was.page[0] || window.scrollY !== was.page[1]) {
      window.scrollTo(was.page[0], was.page[1]);
    }
    // A refused stale save is answered at the top of the page: bring it into sight.
    var stale = document.getElementById("stale-edit");
    if (stale) stale.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("htmx:beforeSwap", record);
  document.addEventListener("htmx:afterSwap", function (event) {
    restore(event.target); // the new #workspace (detail.target is the one it replaced)
  });
  htmx.onLoad(restore); // whatever afterSwap did not reach: it restores once only
})();
