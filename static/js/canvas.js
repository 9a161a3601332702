/*
 * Chain Designer canvas: zoom buttons, node search, an overview, keyboard
 * focus on graph nodes, drag-to-connect and the shortcuts dialog.
 *
 * It builds on static/js/workspace.js, which owns selection, pan and wheel
 * zoom, the click-click connect modes and posting edits; that file hands this
 * one window.chainWorkspace (edit, zoom, setViewBox, fit), so a zoom from a
 * button is remembered exactly like a wheel zoom. It assumes the same SVG
 * contract (chains/core/render.py): node groups carry data-key, data-kind and
 * data-name. A node the keyboard focuses is activated by a synthetic click, so
 * Enter does whatever a click does (select, or pick in a connect mode).
 * Like workspace.js: delegated events, per-render work on htmx:load, no inline
 * handlers or styles (the page's Content-Security-Policy forbids both).
 */
(function () {
  "use strict";

  var FIELDS = "input, textarea, select, [contenteditable]";
  var DRAG_THRESHOLD = 6; // pixels before a press on a node becomes a connecting drag
  var STEP = 1.25; // one zoom button press
  var NATURAL = 4 / 3; // CSS px per Graphviz point: zoom to selection shows labels this size
  var BIG_CHAIN = 30; // nodes from which the overview opens by itself when zoomed in
  var SVGNS = "http://www.w3.org/2000/svg";

  var state = {
    focusKey: null, // the node that had keyboard focus, to focus again after a swap
    refocus: false, // the keyboard (or a search) selected a node: focus it after the swap
    centreOnSelection: false, // a search picked a node: centre on it once it is selected
    drag: null, // a press on a node that may become a connecting drag
    swallowClick: false, // the click that ends a drag selects nothing
    overview: null, // true or false once the user chose; null: decide by size
  };

  function api() {
    return window.chainWorkspace;
  }

  function workspace() {
    return document.getElementById("workspace");
  }

  function canvas() {
    return document.getElementById("canvas");
  }

  function drawing() {
    var c = canvas();
    return c ? c.querySelector("svg") : null;
  }

  function nodes() {
    var svg = drawing();
    return svg ? Array.prototype.slice.call(svg.querySelectorAll("g.node[data-key]")) : [];
  }

  function nodeAt(target) {
    var c = canvas();
    if (!c || !(target instanceof Element) || !c.contains(target)) return null;
    return target.closest("g.node[data-key]");
  }

  function byKey(key) {
    var svg = drawing();
    return key && svg ? svg.querySelector('g.node[data-key="' + CSS.escape(key) + '"]') : null;
  }

  function inField(target) {
    return target instanceof Element && (target.closest(FIELDS) !== null || target.isContentEditable);
  }

  // Screen rectangle -> the drawing's own (viewBox) coordinates.
  function toDrawing(svg, rect) {
    var inverse = svg.getScreenCTM().inverse();
    var a = new DOMPoint(rect.left, rect.top).matrixTransform(inverse);
    var b = new DOMPoint(rect.right, rect.bottom).matrixTransform(inverse);
    return { x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y };
  }

  // --- zoom ---------------------------------------------------------------------------

  // Centre the view on a box of the drawing; zoom in to natural size when the view
  // is smaller than that, and out when the box does not fit.
  function showBox(target, zoomIn) {
    var svg = drawing();
    if (!svg || !api()) return;
    var rect = svg.getBoundingClientRect();
    var view = toDrawing(svg, rect);
    var scale = rect.width / view.w;
    if (zoomIn) scale = Math.max(scale, NATURAL);
    var pad = 1.2;
    scale = Math.min(scale, rect.width / (target.w * pad), rect.height / (target.h * pad));
    var w = rect.width / scale;
    var h = rect.height / scale;
    var cx = target.x + target.w / 2;
    var cy = target.y + target.h / 2;
    api().setViewBox({ x: cx - w / 2, y: cy - h / 2, w: w, h: h });
    drawOverview();
  }

  function selected() {
    var svg = drawing();
    return svg ? svg.querySelector("g.node.selected, g.edge.selected") : null;
  }

  function zoomToSelection() {
    var svg = drawing();
    var g = selected();
    if (!svg || !g) {
      say("Nothing is selected: click a node or find one by id first.");
      return;
    }
    showBox(toDrawing(svg, g.getBoundingClientRect()), true);
  }

  // Pan (never zoom) just enough to bring a node into view.
  function reveal(g) {
    var c = canvas();
    var svg = drawing();
    if (!c || !svg) return;
    var outer = c.getBoundingClientRect();
    var r = g.getBoundingClientRect();
    if (r.left >= outer.left && r.right <= outer.right && r.top >= outer.top && r.bottom <= outer.bottom) {
      return;
    }
    showBox(toDrawing(svg, r), false);
  }

  function say(text) {
    var hint = document.getElementById("mode-hint");
    if (hint) hint.textContent = text;
  }

  // --- node search --------------------------------------------------------------------

  // A key as listed, else an id as typed: exact, then ignoring case, then a prefix.
  function findNode(text) {
    var wanted = text.trim();
    if (!wanted) return null;
    var all = nodes();
    var tests = [
      function (g) {
        return g.dataset.key === wanted || g.dataset.name === wanted;
      },
      function (g) {
        return g.dataset.name.toLowerCase() === wanted.toLowerCase();
      },
      function (g) {
        return g.dataset.name.toLowerCase().indexOf(wanted.toLowerCase()) === 0;
      },
    ];
    for (var i = 0; i < tests.length; i++) {
      var found = all.filter(tests[i]);
      if (found.length) return found[0];
    }
    return null;
  }

  function onSearch(event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.id !== "node-search") return;
    event.preventDefault();
    var input = form.querySelector("input[type=search]");
    var g = findNode(input.value);
    if (!g) {
      say("No node called " + input.value.trim() + " in this drawing.");
      return;
    }
    state.centreOnSelection = true;
    state.focusKey = g.dataset.key;
    state.refocus = true;
    activate(g);
  }

  // --- the overview -------------------------------------------------------------------

  // Unless the user chose, a big chain shows its overview while zoomed in (at
  // the fit the canvas itself is the overview).
  function overviewWanted() {
    if (state.overview !== null) return state.overview;
    var svg = drawing();
    var fit = svg && (svg.dataset.fit || "").split(/[\s,]+/).map(Number);
    var view = svg && (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
    var cropped = fit && (view[2] < fit[2] * 0.98 || view[3] < fit[3] * 0.98);
    return nodes().length >= BIG_CHAIN && Boolean(cropped);
  }

  // A map of the whole drawing: one rectangle per node, and the part in view.
  function drawOverview() {
    var box = document.getElementById("overview");
    var svg = drawing();
    var button = document.querySelector("#workspace [data-overview]");
    var on = Boolean(svg && svg.dataset.fit) && overviewWanted();
    if (button) button.setAttribute("aria-pressed", String(on));
    if (!box) return;
    box.hidden = !on;
    if (!on) return;
    var fit = svg.dataset.fit;
    var map = box.querySelector("svg");
    if (!map || map.dataset.fit !== fit || map.dataset.count !== String(nodes().length)) {
      box.textContent = "";
      map = document.createElementNS(SVGNS, "svg");
      map.setAttribute("viewBox", fit);
      map.dataset.fit = fit;
      map.dataset.count = String(nodes().length);
      var saved = svg.getAttribute("viewBox");
      svg.setAttribute("viewBox", fit); // measure against the whole drawing
      nodes().forEach(function (g) {
        var r = toDrawing(svg, g.getBoundingClientRect());
        var rect = document.createElementNS(SVGNS, "rect");
        rect.setAttribute("x", r.x);
        rect.setAttribute("y", r.y);
        rect.setAttribute("width", r.w);
        rect.setAttribute("height", r.h);
        var shape = g.querySelector("path, polygon, ellipse");
        rect.setAttribute("fill", (shape && shape.getAttribute("fill")) || "#ffffff");
        rect.setAttribute("class", g.classList.contains("selected") ? "map-node selected" : "map-node");
        map.appendChild(rect);
      });
      svg.setAttribute("viewBox", saved);
      var view = document.createElementNS(SVGNS, "rect");
      view.setAttribute("class", "map-view");
      map.appendChild(view);
      box.appendChild(map);
    }
    var frame = map.querySelector(".map-view");
    var shown = (svg.getAttribute("viewBox") || "").split(/[\s,]+/);
    frame.setAttribute("x", shown[0]);
    frame.setAttribute("y", shown[1]);
    frame.setAttribute("width", shown[2]);
    frame.setAttribute("height", shown[3]);
  }

  function overviewJump(event) {
    var box = document.getElementById("overview");
    var map = box && box.querySelector("svg");
    var svg = drawing();
    if (!map || !svg || !box.contains(event.target)) return false;
    var p = new DOMPoint(event.clientX, event.clientY).matrixTransform(map.getScreenCTM().inverse());
    var view = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
    api().setViewBox({ x: p.x - view[2] / 2, y: p.y - view[3] / 2, w: view[2], h: view[3] });
    drawOverview();
    return true;
  }

  function toggleOverview() {
    state.overview = !overviewWanted();
    drawOverview();
  }

  // --- keyboard focus on nodes --------------------------------------------------------

  function makeFocusable() {
    var all = nodes();
    var chosen = byKey(state.focusKey) || selectedNode() || all[0];
    all.forEach(function (g) {
      g.setAttribute("tabindex", g === chosen ? "0" : "-1");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", g.dataset.kind + " " + g.dataset.name);
    });
  }

  function selectedNode() {
    var svg = drawing();
    return svg ? svg.querySelector("g.node.selected[data-key]") : null;
  }

  function focusNode(g) {
    if (!g) return;
    nodes().forEach(function (other) {
      other.setAttribute("tabindex", other === g ? "0" : "-1");
    });
    state.focusKey = g.dataset.key;
    g.focus({ preventScroll: true });
    reveal(g);
  }

  function centre(g) {
    var r = g.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }

  // The nearest node in the arrow's direction.
  function neighbour(g, key) {
    var from = centre(g);
    var dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[key];
    var best = null;
    var bestCost = Infinity;
    nodes().forEach(function (other) {
      if (other === g) return;
      var to = centre(other);
      var dx = to.x - from.x;
      var dy = to.y - from.y;
      var ahead = dx * dir[0] + dy * dir[1];
      if (ahead <= 1) return;
      var aside = Math.abs(dx * dir[1] - dy * dir[0]);
      // Rows run across (one per step): up and down go to the next row first,
      // left and right stay on the row when they can.
      var cost = dir[1] ? 4 * ahead + aside : ahead + 4 * aside;
      if (cost < bestCost) {
        bestCost = cost;
        best = other;
      }
    });
    return best;
  }

  function activate(g) {
    g.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, view: window }));
  }

  // --- drag from one node to another to connect them (or, in the flow, to reorder) ------

  // The edit a drag from ``a`` to ``b`` makes, with what to say about it: on the
  // handle graph the edge between them; in the flow, a step dropped on another
  // step takes that step's place in the order (move_action; the server lays
  // both views out afresh, since the rows follow the steps).
  function dropEdit(a, b) {
    if (workspace().dataset.view === "flow") {
      var order = steps();
      var to = order.indexOf(b.dataset.name);
      if (!mainLine(a) || !mainLine(b) || to < 0) return null;
      return {
        op: "move_action",
        args: { id: a.dataset.name, index: to },
        text: "move " + a.dataset.name + " to where " + b.dataset.name + " is",
      };
    }
    var edge = dragEdge(a, b);
    return edge && { op: "add_edge", args: edge, text: "add " + edgeText(edge) };
  }

  function mainLine(g) {
    return g.dataset.kind === "action" && g.classList.contains("main-line");
  }

  // The actions in the chain's order (the workspace's data-actions, a JSON list).
  function steps() {
    try {
      return JSON.parse(workspace().dataset.actions || "[]");
    } catch (e) {
      return [];
    }
  }

  // The arrow as it will be drawn (chains.core.keys.arrow), in the args the connect
  // modes post.
  function dragEdge(a, b) {
    var from = a.dataset.kind;
    var to = b.dataset.kind;
    if (from === "handle" && to === "handle") {
      return { kind: "derived_from", source: b.dataset.name, target: a.dataset.name };
    }
    if (from === "action" && to === "handle") {
      return { kind: "mints", source: a.dataset.name, target: b.dataset.name };
    }
    if (from === "handle" && to === "action") {
      return { kind: "consumes", source: b.dataset.name, target: a.dataset.name };
    }
    return null;
  }

  function canDrag(g) {
    var ws = workspace();
    if (!g || !ws || ws.dataset.canEdit !== "true") return false;
    return ws.dataset.view === "flow" ? mainLine(g) : /^(action|handle)$/.test(g.dataset.kind);
  }

  function onPointerDown(event) {
    state.swallowClick = false;
    var g = event.button === 0 ? nodeAt(event.target) : null;
    if (!canDrag(g)) {
      if (overviewJump(event)) event.preventDefault();
      return;
    }
    // The press is ours: workspace.js would start panning the drawing.
    event.stopPropagation();
    state.drag = { id: event.pointerId, from: g, x: event.clientX, y: event.clientY, line: null };
  }

  function onPointerMove(event) {
    var drag = state.drag;
    if (!drag || event.pointerId !== drag.id) return;
    var svg = drawing();
    if (!drag.line) {
      if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD) return;
      drag.line = document.createElementNS(SVGNS, "line");
      drag.line.setAttribute("class", "connect-line");
      svg.appendChild(drag.line);
      drag.from.classList.add("connect-source");
      canvas().classList.add("dragging-edge");
    }
    var inverse = svg.getScreenCTM().inverse();
    var a = new DOMPoint(drag.x, drag.y).matrixTransform(inverse);
    var b = new DOMPoint(event.clientX, event.clientY).matrixTransform(inverse);
    drag.line.setAttribute("x1", a.x);
    drag.line.setAttribute("y1", a.y);
    drag.line.setAttribute("x2", b.x);
    drag.line.setAttribute("y2", b.y);
    var over = nodeAt(document.elementFromPoint(event.clientX, event.clientY));
    var change = over && over !== drag.from ? dropEdit(drag.from, over) : null;
    var flow = workspace().dataset.view === "flow";
    say(
      change
        ? "Drop to " + change.text + "."
        : over && over !== drag.from
          ? flow
            ? "Drop on a step of the main line to move " + drag.from.dataset.name + " there."
            : "No edge joins " + article(drag.from.dataset.kind) + " to " + article(over.dataset.kind) + "."
          : flow
            ? "Drag onto another step to move " + drag.from.dataset.name + " there."
            : "Drag onto a node to connect it.",
    );
  }

  function edgeText(edge) {
    if (edge.kind === "derived_from") return edge.source + " derives from " + edge.target;
    return edge.source + " " + edge.kind + " " + edge.target;
  }

  function article(noun) {
    return (/^[aeiou]/.test(noun) ? "an " : "a ") + noun;
  }

  function endDrag() {
    var drag = state.drag;
    state.drag = null;
    if (drag && drag.line) {
      drag.line.remove();
      drag.from.classList.remove("connect-source");
      var c = canvas();
      if (c) c.classList.remove("dragging-edge");
    }
    return drag;
  }

  function onPointerUp(event) {
    var drag = state.drag;
    if (!drag || event.pointerId !== drag.id) return;
    var moved = Boolean(drag.line);
    endDrag();
    if (!moved) return; // a click: workspace.js selects the node
    state.swallowClick = true;
    var over = nodeAt(document.elementFromPoint(event.clientX, event.clientY));
    if (!over || over === drag.from) {
      say("");
      return;
    }
    var change = dropEdit(drag.from, over);
    if (!change) return;
    say("Saving: " + change.text + "…");
    api().edit(change.op, change.args);
  }

  // --- the shortcuts dialog -----------------------------------------------------------

  function showShortcuts() {
    var dialog = document.getElementById("shortcuts");
    if (dialog && !dialog.open) dialog.showModal();
  }

  // --- events -------------------------------------------------------------------------

  function onClick(event) {
    if (state.swallowClick) {
      state.swallowClick = false;
      var c = canvas();
      if (c && c.contains(event.target)) {
        event.stopPropagation();
        event.preventDefault();
        return;
      }
    }
    var target = event.target;
    if (!(target instanceof Element) || !workspace()) return;
    var button = target.closest("#workspace [data-zoom], #workspace [data-overview], #workspace [data-shortcuts]");
    if (!button || !api()) return;
    var zoom = button.dataset.zoom;
    if (zoom === "in") api().zoom(1 / STEP);
    else if (zoom === "out") api().zoom(STEP);
    else if (zoom === "selection") zoomToSelection();
    else if (button.hasAttribute("data-overview")) toggleOverview();
    else if (button.hasAttribute("data-shortcuts")) showShortcuts();
    // "fit" is workspace.js's; the overview follows on the next frame.
    requestAnimationFrame(drawOverview);
  }

  function onKeydown(event) {
    var ws = workspace();
    if (!ws || event.defaultPrevented || !api()) return;
    var dialog = document.getElementById("shortcuts");
    if (dialog && dialog.open) {
      if (event.key === "Escape") {
        // The dialog closes itself; workspace.js must not also clear the selection.
        event.stopPropagation();
      }
      return;
    }
    if (inField(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    var g = nodeAt(event.target);
    var key = event.key;
    var handled = true;
    if (/^Arrow/.test(key)) {
      if (g) focusNode(neighbour(g, key) || g);
      else if (event.target === canvas()) focusNode(byKey(state.focusKey) || selectedNode() || nodes()[0]);
      else handled = false;
    } else if ((key === "Enter" || key === " ") && g) {
      state.focusKey = g.dataset.key;
      state.refocus = true;
      activate(g);
    } else if (key === "+" || key === "=") api().zoom(1 / STEP);
    else if (key === "-" || key === "_") api().zoom(STEP);
    else if (key === "0") api().fit();
    else if (key === "z" || key === "Z") zoomToSelection();
    else if (key === "o" || key === "O") toggleOverview();
    else if (key === "?") showShortcuts();
    else if (key === "/") {
      var input = document.getElementById("node-search-input");
      if (input) input.focus();
    } else handled = false;
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
      requestAnimationFrame(drawOverview);
    }
  }

  // The canvas takes the height left in the window below its top, less the legend
  // under it (never less than 20rem): the page fits the drawing into it, so every
  // pixel of height is label size, and the key to the drawing is in sight with it.
  function sizeCanvas() {
    var c = canvas();
    if (!c) return;
    var top = c.getBoundingClientRect().top + window.scrollY;
    var rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
    var legend = document.querySelector("#workspace .canvas-pane .legend");
    var below = legend ? legend.getBoundingClientRect().bottom - c.getBoundingClientRect().bottom : 0;
    var full = window.innerHeight - top - 0.75 * rem;
    // The legend gives way where its room would shrink the labels below 11px.
    var height = Math.max(20 * rem, Math.min(full, Math.max(full - below, legibleHeight(c))));
    var root = document.documentElement.style;
    if (Math.abs(parseFloat(root.getPropertyValue("--canvas-height") || "0") - height) > 2) {
      root.setProperty("--canvas-height", Math.round(height) + "px");
    }
    // Whatever moved or resized the canvas since its view was set (this height, a note
    // above it), the view keeps its scale and place, or fits again (workspace.js).
    if (api()) api().resized();
  }

  // The canvas height at which a height-bound drawing shows its labels at 11px (0 when
  // the width bounds it, or nothing is drawn): below it, height is label size.
  function legibleHeight(c) {
    var svg = drawing();
    var box = svg && (svg.dataset.fit || svg.getAttribute("viewBox"));
    if (!box) return 0;
    var parts = box.split(/[\s,]+/).map(Number);
    var sizes = [].map.call(svg.querySelectorAll("g.node text"), function (t) {
      return parseFloat(t.getAttribute("font-size")) || 14;
    });
    if (!sizes.length || !(parts[2] > 0) || !(parts[3] > 0)) return 0;
    var scale = 11.25 / Math.min.apply(null, sizes); // px per drawing unit (a little over 11)
    var border = c.offsetHeight - c.clientHeight;
    return c.clientWidth / parts[2] < scale ? 0 : parts[3] * scale + border;
  }

  function rendered() {
    var tools = document.querySelector("#workspace .zoom-tools");
    if (tools) tools.hidden = false; // the buttons need this file; without it they'd do nothing
    sizeCanvas();
    if (!drawing()) return;
    makeFocusable();
    var g = byKey(state.focusKey);
    var refocus = state.refocus;
    state.refocus = false;
    if (state.centreOnSelection) {
      state.centreOnSelection = false;
      var chosen = selectedNode();
      if (chosen) showBox(toDrawing(drawing(), chosen.getBoundingClientRect()), true);
    }
    if (g && refocus) g.focus({ preventScroll: true });
    drawOverview();
  }

  // Before workspace.js measures the drawing on the first htmx:load.
  sizeCanvas();
  window.addEventListener("resize", sizeCanvas);
  // Opening or closing a panel above the canvas (the adders) moves the canvas's top.
  document.addEventListener(
    "toggle",
    function (event) {
      if (event.target.closest && event.target.closest("#workspace")) sizeCanvas();
    },
    true,
  );

  // Capture: these run before workspace.js's handlers on the document.
  window.addEventListener("pointerdown", onPointerDown, true);
  window.addEventListener("click", onClick, true);
  window.addEventListener("keydown", onKeydown, true);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", function () {
    endDrag();
  });
  document.addEventListener("submit", onSearch, true);
  document.addEventListener("wheel", function () {
    requestAnimationFrame(drawOverview);
  });
  document.addEventListener("pointerup", function () {
    requestAnimationFrame(drawOverview);
  });
  htmx.onLoad(function (element) {
    var holds = element.querySelector && element.querySelector("#workspace");
    if (element.id === "workspace" || holds) rendered();
  });
})();
