/*
 * Chain Designer workspace layout: what JavaScript adds to where things sit.
 *
 * Without it the page has a side panel of the stylesheet's default width,
 * and the wide-tab and lint-filter links reload the page. This file adds:
 *
 * - the resize handle between the canvas and the side panel (#ws-resizer,
 *   shown once this file puts the class layout-js on <html>): drag it, or focus it and use the arrow keys (Shift for
 *   bigger steps, Home and End for the narrowest and widest, a double click
 *   or Enter for the default). The width is the custom property
 *   --side-width on <html>, which htmx never replaces, so it survives every
 *   swap of #workspace; localStorage keeps it across reloads.
 * - the layout state (data-wide, data-sev on #workspace) carried along by
 *   every htmx request that replaces #workspace and does not name it
 *   itself, and kept in the address bar, so an edit or a click on the
 *   graph neither narrows a wide table nor drops the lint filter.
 *
 * Sizes are set through the CSSOM, never a style attribute: the
 * Content-Security-Policy forbids inline styles. No inline handlers.
 */
(function () {
  "use strict";

  var STORE = "chain-designer:side-width";
  var MIN = 288; // px: narrower, the tabs and their forms stop fitting
  var CANVAS_ROOM = 352; // px left to the canvas: layout.css's calc(100% - 22rem)
  var STEP = 16;
  var BIG_STEP = 64;
  var KEPT = ["wide", "sev"]; // the layout state of #workspace's data attributes

  function workspace() {
    return document.getElementById("workspace");
  }

  function body() {
    return document.getElementById("ws-body");
  }

  function handle() {
    return document.getElementById("ws-resizer");
  }

  function panel() {
    return document.getElementById("side-pane");
  }

  // --- the panel's width ---------------------------------------------------------

  function limits() {
    var b = body();
    var room = b ? b.getBoundingClientRect().width : window.innerWidth;
    return { min: MIN, max: Math.max(MIN, Math.round(room - CANVAS_ROOM)) };
  }

  function clamp(width) {
    var l = limits();
    return Math.round(Math.min(Math.max(width, l.min), l.max));
  }

  function stored() {
    try {
      var width = Number(localStorage.getItem(STORE));
      return width > 0 ? width : null;
    } catch (e) {
      return null; // storage off: the default width
    }
  }

  function apply(width) {
    var root = document.documentElement.style;
    if (width === null) root.removeProperty("--side-width");
    else root.setProperty("--side-width", width + "px");
    describe();
  }

  function remember(width) {
    try {
      if (width === null) localStorage.removeItem(STORE);
      else localStorage.setItem(STORE, String(width));
    } catch (e) {
      /* storage full or off: the width just won't survive a reload */
    }
  }

  function setWidth(width) {
    var w = width === null ? null : clamp(width);
    apply(w);
    remember(w);
  }

  function currentWidth() {
    var p = panel();
    return p ? Math.round(p.getBoundingClientRect().width) : MIN;
  }

  // The separator's value is the panel's width in pixels, for screen readers.
  function describe() {
    var h = handle();
    if (!h || !h.offsetParent) return; // not shown (full width, a narrow window)
    var l = limits();
    h.setAttribute("aria-valuemin", String(l.min));
    h.setAttribute("aria-valuemax", String(l.max));
    h.setAttribute("aria-valuenow", String(currentWidth()));
    h.setAttribute("aria-valuetext", "side panel " + currentWidth() + " pixels wide");
  }

  var drag = null; // the pointer dragging the handle, where it started and the width then

  function onPointerDown(event) {
    var h = handle();
    if (!h || event.target !== h || event.button !== 0) return;
    event.preventDefault();
    drag = { id: event.pointerId, x: event.clientX, width: currentWidth() };
    h.setPointerCapture(event.pointerId);
    h.classList.add("dragging");
    h.focus({ preventScroll: true });
  }

  function onPointerMove(event) {
    if (!drag || event.pointerId !== drag.id) return;
    // The handle sits left of the panel: moving it left widens the panel.
    apply(clamp(drag.width - (event.clientX - drag.x)));
  }

  function onPointerUp(event) {
    if (!drag || event.pointerId !== drag.id) return;
    drag = null;
    var h = handle();
    if (h) {
      h.classList.remove("dragging");
      if (h.hasPointerCapture(event.pointerId)) h.releasePointerCapture(event.pointerId);
    }
    remember(clamp(currentWidth()));
  }

  function onKeydown(event) {
    if (event.target !== handle() || event.ctrlKey || event.metaKey || event.altKey) return;
    var step = event.shiftKey ? BIG_STEP : STEP;
    var width = currentWidth();
    var keys = {
      ArrowLeft: width + step,
      ArrowRight: width - step,
      Home: limits().min,
      End: limits().max,
      Enter: null,
    };
    if (!(event.key in keys)) return;
    event.preventDefault();
    setWidth(keys[event.key]);
  }

  function onDoubleClick(event) {
    if (event.target === handle()) setWidth(null);
  }

  // --- the layout state ------------------------------------------------------------

  function carryState(event) {
    var d = event.detail;
    var ws = workspace();
    if (!ws || !d.target || d.target.id !== "workspace" || !d.formData) return;
    var named = new URL(d.path, location.href).searchParams;
    KEPT.forEach(function (name) {
      var value = ws.dataset[name];
      if (value && !named.has(name) && !d.formData.has(name)) d.formData.set(name, value);
    });
  }

  // A reload shows what is on screen, whichever script pushed the address.
  function keepAddress() {
    var ws = workspace();
    if (!ws || !history.state || !history.state.workspace) return;
    var url = new URL(location.href);
    var changed = false;
    KEPT.forEach(function (name) {
      var value = ws.dataset[name] || "";
      if ((url.searchParams.get(name) || "") === value) return;
      if (value) url.searchParams.set(name, value);
      else url.searchParams.delete(name);
      changed = true;
    });
    if (changed) history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }

  // --- wiring ----------------------------------------------------------------------

  function rendered() {
    describe();
    keepAddress();
  }

  // On <html>, which no swap replaces: the handle never blinks out and back.
  document.documentElement.classList.add("layout-js");
  apply(stored());
  document.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  document.addEventListener("keydown", onKeydown);
  document.addEventListener("dblclick", onDoubleClick);
  document.addEventListener("htmx:configRequest", carryState);
  window.addEventListener("resize", describe);
  htmx.onLoad(function (element) {
    var holds = element.querySelector && element.querySelector("#workspace");
    if (element.id === "workspace" || holds) rendered();
  });
})();
