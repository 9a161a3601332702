/*
 * Chain Designer workspace: what JavaScript adds to the chain page.
 *
 * The page works without it (links and plain form posts); this file makes it
 * a drawing tool: click a node or edge of the SVG to select it (of edges that
 * run close together, the one nearest the pointer), pan and zoom
 * the drawing, draw edges in a connect mode, keyboard shortcuts (Escape,
 * Delete, Ctrl/Cmd+Z, Ctrl/Cmd+Shift+Z) and drag-reordering of verdict rows.
 * It assumes the SVG contract of chains/core/render.py: every node and edge
 * <g> has its graph key as id and carries the key's parts as data attributes
 * (chains/core/keys.py key_attributes): data-key, data-kind ("edge" or the
 * node kind) and data-name on nodes; data-edge-kind, data-source and
 * data-target on edges. It reads those and never splits a key itself, since
 * ids may contain ":". It also assumes the data-* attributes on #workspace,
 * which htmx replaces wholesale after every request. So events are delegated from
 * the document and only per-render work (the saved pan/zoom, edge hit areas,
 * the mode buttons' state) runs again on each htmx:load. Edits go through
 * htmx.ajax so they carry the CSRF header from <body hx-headers>. No inline
 * handlers, no eval: a Content-Security-Policy can forbid both.
 */
(function () {
  "use strict";

  var FIELDS = "input, textarea, select, [contenteditable]";
  var STORE = "chain-designer:view:";
  var DRAG_THRESHOLD = 4; // pixels a press may move and still be a click
  var PX_PER_PT = 4 / 3; // Graphviz draws in points; 1:1 is its natural size
  // Links inside the workspace that htmx can follow without reloading the page.
  var SOFT_LINKS = [
    "a.finding-link",
    "#cascade-list a",
    "#workspace nav.tabs a",
    "#element-panel a.close",
    "#workspace nav.severity-filter a",
  ].join(", ");

  var MODES = {
    derived_from: {
      first: "handle",
      second: "handle",
      start: "Derives from: click the handle that derives (the child).",
      next: function (name) {
        return "Now click the handle " + name + " derives from (its parent).";
      },
    },
    consumes: {
      first: "action",
      second: "handle",
      start: "Consumes: click the action that consumes a handle.",
      next: function (name) {
        return "Now click the handle " + name + " consumes.";
      },
    },
    mints: {
      first: "action",
      second: "handle",
      start: "Mints: click the action that mints a handle.",
      next: function (name) {
        return "Now click the handle " + name + " mints.";
      },
    },
  };

  var state = {
    mode: null, // a key of MODES while connecting
    first: null, // graph key picked first in the connect mode
    firstName: null, // and the id of that element
    note: "", // said before the hint once (after an edge was added, or a wrong click)
    pan: null, // the press being turned into a pan
    swallowClick: false, // the click that ends a pan selects nothing
    dragged: null, // the verdict row or step being dragged (its data-move-*)
    refocus: false, // put focus back on the canvas after the next swap
    pushing: null, // the URL to push to history once its workspace is in
    hoverQueued: false, // a nearest-edge search waits for the next frame
    before: null, // where the nodes sat on screen before this swap (see keepPlaces)
    reveal: null, // the key of a node the swap added, to bring into view (canvasResized)
    settling: false, // a swap kept the places; the canvas may still move once (canvasResized)
  };

  var renders = 0; // workspaces drawn on this page so far (see rendered)

  var requests = {
    current: null, // the request whose answer #workspace will show: { xhr, verb, push, url }
    asking: null, // what load() asks for, until htmx:beforeRequest names its xhr
    waiting: null, // a GET asked for while an edit was in flight: { url, push }
  };

  // --- finding things ----------------------------------------------------------------

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

  function elementAt(target) {
    var c = canvas();
    if (!c || !(target instanceof Element) || !c.contains(target)) return null;
    var g = target.closest("g.node, g.edge");
    return g && c.contains(g) ? g : null;
  }

  // --- edges: the one nearest the pointer ---------------------------------------------
  // Where edges run close together their wide hit areas overlap, and the one drawn last
  // would take every click there. So a click on an edge selects the edge whose line is
  // nearest the pointer, and hovering marks that edge as the candidate (class
  // "candidate"). Each line is sampled once per drawing, in its own coordinates.

  function samples(path) {
    if (!path.chainSamples) {
      var length = path.getTotalLength();
      var step = Math.max(2, length / 200);
      var points = [];
      for (var at = 0; at <= length; at += step) points.push(path.getPointAtLength(at));
      points.push(path.getPointAtLength(length));
      path.chainSamples = points;
    }
    return path.chainSamples;
  }

  function distanceTo(path, clientX, clientY) {
    var m = path.getScreenCTM();
    if (!m) return Infinity;
    var p = new DOMPoint(clientX, clientY).matrixTransform(m.inverse());
    var best = Infinity;
    samples(path).forEach(function (q) {
      best = Math.min(best, Math.hypot(q.x - p.x, q.y - p.y));
    });
    return best * Math.hypot(m.a, m.b); // back in screen pixels
  }

  function nearestEdge(clientX, clientY) {
    var svg = drawing();
    if (!svg) return null;
    var best = null;
    var bestDistance = Infinity;
    svg.querySelectorAll("g.edge").forEach(function (g) {
      g.querySelectorAll("path:not(.hit)").forEach(function (path) {
        var d = distanceTo(path, clientX, clientY);
        if (d < bestDistance) {
          best = g;
          bestDistance = d;
        }
      });
    });
    return best;
  }

  function markCandidate(g) {
    var svg = drawing();
    var old = svg ? svg.querySelector("g.edge.candidate") : null;
    if (old === g) return;
    if (old) old.classList.remove("candidate");
    if (g) g.classList.add("candidate");
  }

  function onEdgeHover(event) {
    if (state.pan || state.hoverQueued) return;
    var g = elementAt(event.target);
    if (!g || !g.classList.contains("edge")) {
      markCandidate(null);
      return;
    }
    state.hoverQueued = true;
    var x = event.clientX;
    var y = event.clientY;
    requestAnimationFrame(function () {
      state.hoverQueued = false;
      markCandidate(nearestEdge(x, y));
    });
  }

  function inField(target) {
    if (!(target instanceof Element)) return false;
    return target.closest(FIELDS) !== null || target.isContentEditable;
  }

  // --- talking to the server ---------------------------------------------------------

  function pageUrl(select) {
    var ws = workspace();
    var query = new URLSearchParams();
    if (select) query.set("select", select);
    query.set("tab", ws.dataset.tab);
    query.set("view", ws.dataset.view);
    return location.pathname + "?" + query.toString();
  }

  // Each request gets a source element of its own: htmx drops a request whose
  // source has one in flight already, and that would drop a quick second click.
  function swapIn(verb, url, values) {
    var source = document.createElement("span");
    source.hidden = true;
    source.setAttribute("data-workspace-request", "");
    document.body.appendChild(source); // inside <body>, so its hx-headers (CSRF) apply
    var options = { target: "#workspace", swap: "outerHTML", source: source };
    if (values) options.values = values;
    return htmx.ajax(verb, url, options);
  }

  // The URL is pushed once the new workspace is in (see rendered), so a
  // reload keeps the selection and Back returns to the previous one.
  function go(url) {
    return load(url, true);
  }

  // The newest request for #workspace wins: the answer of an older one still
  // in flight is not swapped in (not aborted either: htmx logs an abort as an
  // error). A GET asked for while an edit is in flight waits for the edit, so
  // the edit is neither lost nor overtaken. The URL to push travels with its
  // own request, so an answer never pushes another request's address.
  function load(url, push) {
    if (requests.current && requests.current.verb !== "get") {
      requests.waiting = { url: url, push: push };
      return null;
    }
    requests.asking = { url: url, push: push };
    return swapIn("GET", url);
  }

  // An edit and a GET may start in either order (a click right after a submit): the
  // edit always wins, and the GET is asked again once the edit is in, so the page
  // shows both the edit and the selection, never a drawing from before the edit.
  function requestStarts(event) {
    var detail = event.detail;
    if (!detail.target || detail.target.id !== "workspace") return;
    var verb = (detail.requestConfig && detail.requestConfig.verb) || "get";
    var now = requests.current;
    if (verb !== "get") {
      if (now && now.verb === "get" && now.url) {
        requests.waiting = { url: now.url, push: now.push !== null };
      }
      requests.current = { xhr: detail.xhr, verb: verb, push: null, url: null };
      return;
    }
    var asked = requests.asking;
    requests.asking = null;
    if (now && now.verb !== "get") {
      // an edit is in flight: this answer is dropped (swapStarts), the GET asked again later
      if (asked) requests.waiting = { url: asked.url, push: asked.push };
      return;
    }
    requests.current = {
      xhr: detail.xhr,
      verb: verb,
      push: asked && asked.push ? asked.url : null,
      url: asked ? asked.url : null,
    };
  }

  function requestEnds(event) {
    var source = event.detail.elt;
    if (source && source.hasAttribute && source.hasAttribute("data-workspace-request")) {
      source.remove();
    }
    var done = requests.current;
    if (!done || event.detail.xhr !== done.xhr) return;
    requests.current = null;
    var next = requests.waiting;
    requests.waiting = null;
    if (next) load(next.url, next.push);
  }

  function swapStarts(event) {
    var detail = event.detail;
    if (!detail.target || detail.target.id !== "workspace") return;
    var done = requests.current;
    if (!done || detail.xhr !== done.xhr) {
      detail.shouldSwap = false; // a newer request replaced this one
      return;
    }
    state.pushing = detail.shouldSwap ? done.push : null;
    state.before = detail.shouldSwap ? placesNow() : null;
  }

  function selectKey(key) {
    return go(pageUrl(key));
  }

  function edit(op, args) {
    var ws = workspace();
    if (ws.dataset.canEdit !== "true") return null; // a reader's page offers no edits
    return swapIn("POST", ws.dataset.editUrl, {
      base: ws.dataset.base,
      op: op,
      args: JSON.stringify(args),
      select: ws.dataset.select,
      tab: ws.dataset.tab,
      view: ws.dataset.view,
    });
  }

  function submit(form) {
    var button = form && form.querySelector("button[type=submit], button:not([type])");
    // :disabled also holds for a button inside a disabled fieldset (a reader's page).
    if (!form || (button && button.matches(":disabled"))) return false;
    state.refocus = true;
    form.requestSubmit();
    return true;
  }

  // --- connect modes -----------------------------------------------------------------

  function setMode(mode) {
    state.mode = mode && MODES[mode] ? mode : null;
    state.first = null;
    state.firstName = null;
    state.note = "";
    showMode();
  }

  function showMode() {
    var ws = workspace();
    if (!ws) return;
    ws.querySelectorAll("[data-mode]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.dataset.mode === state.mode));
    });
    var c = canvas();
    if (c) {
      c.classList.toggle("connecting", state.mode !== null);
      c.querySelectorAll("g.connect-source").forEach(function (g) {
        g.classList.remove("connect-source");
      });
      var first = state.first && c.querySelector("#" + CSS.escape(state.first));
      if (first) first.classList.add("connect-source");
    }
    var hint = document.getElementById("mode-hint");
    if (!hint) return;
    if (!state.mode) {
      hint.textContent = state.note;
      return;
    }
    var mode = MODES[state.mode];
    var text = state.first ? mode.next(state.firstName) : mode.start;
    hint.textContent = (state.note ? state.note + " " : "") + text + " (Escape to stop.)";
  }

  function article(noun) {
    return (/^[aeiou]/.test(noun) ? "an " : "a ") + noun;
  }

  function connectClick(g) {
    var mode = MODES[state.mode];
    var key = g.dataset.key;
    var kind = g.dataset.kind;
    var wanted = state.first ? mode.second : mode.first;
    if (kind !== wanted) {
      state.note = "That is " + article(kind || "edge") + ", not " + article(wanted) + ".";
    } else if (!state.first) {
      state.first = key;
      state.firstName = g.dataset.name;
      state.note = "";
    } else if (key === state.first) {
      state.note = "A handle cannot derive from itself.";
    } else {
      var source = state.firstName;
      state.first = null;
      state.firstName = null;
      state.note = "";
      state.refocus = true;
      edit("add_edge", { kind: state.mode, source: source, target: g.dataset.name });
    }
    showMode();
  }

  // --- pan and zoom ------------------------------------------------------------------

  function storeKey() {
    var ws = workspace();
    return STORE + ws.dataset.chain + ":" + ws.dataset.view;
  }

  function readBox(text) {
    var n = (text || "").trim().split(/[\s,]+/).map(Number);
    if (n.length !== 4 || n.some(isNaN) || n[2] <= 0 || n[3] <= 0) return null;
    return { x: n[0], y: n[1], w: n[2], h: n[3] };
  }

  function viewBox(svg) {
    return readBox(svg.getAttribute("viewBox"));
  }

  function boxText(box) {
    return [box.x, box.y, box.w, box.h].join(" ");
  }

  // Where each drawing's element was on the page, and its size, when its viewBox was
  // last set (see canvasResized).
  var shownAt = new WeakMap();

  function setViewBox(svg, box, remember) {
    svg.setAttribute("viewBox", boxText(box));
    shownAt.set(svg, placeOf(svg));
    if (remember) {
      try {
        sessionStorage.setItem(storeKey(), JSON.stringify(box));
      } catch (e) {
        /* storage full or off: the view just won't survive a reload */
      }
    }
  }

  function savedBox() {
    try {
      var box = JSON.parse(sessionStorage.getItem(storeKey()) || "null");
      return box ? readBox([box.x, box.y, box.w, box.h].join(" ")) : null;
    } catch (e) {
      return null; // storage off or a stale format: start from the fit
    }
  }

  // The default preserveAspectRatio (xMidYMid meet) maps the viewBox into
  // the element with one scale and centred slack.
  function geometry(svg) {
    var box = viewBox(svg);
    var rect = svg.getBoundingClientRect();
    if (!box || rect.width === 0 || rect.height === 0) return null;
    var scale = Math.min(rect.width / box.w, rect.height / box.h);
    return {
      box: box,
      scale: scale,
      left: rect.left + (rect.width - box.w * scale) / 2,
      top: rect.top + (rect.height - box.h * scale) / 2,
    };
  }

  function zoom(svg, clientX, clientY, factor) {
    var geo = geometry(svg);
    var fit = readBox(svg.dataset.fit);
    if (!geo || !fit) return;
    var box = geo.box;
    var w = Math.min(Math.max(box.w * factor, fit.w / 20), fit.w * 5);
    factor = w / box.w;
    var px = box.x + (clientX - geo.left) / geo.scale;
    var py = box.y + (clientY - geo.top) / geo.scale;
    setViewBox(
      svg,
      { x: px - (px - box.x) * factor, y: py - (py - box.y) * factor, w: w, h: box.h * factor },
      true,
    );
  }

  // The whole drawing, but never blown up past its natural size: a chain of
  // three nodes should not fill the canvas with one giant box.
  function fitBox(svg, box) {
    var rect = svg.getBoundingClientRect();
    if (!rect.width || !rect.height) return box;
    if (Math.min(rect.width / box.w, rect.height / box.h) <= PX_PER_PT) return box;
    var w = rect.width / PX_PER_PT;
    var h = rect.height / PX_PER_PT;
    return { x: box.x - (w - box.w) / 2, y: box.y - (h - box.h) / 2, w: w, h: h };
  }

  function fit() {
    var svg = drawing();
    if (!svg || !svg.dataset.fit) return;
    setViewBox(svg, readBox(svg.dataset.fit), false);
    try {
      sessionStorage.removeItem(storeKey());
    } catch (e) {
      /* nothing stored */
    }
  }

  // --- once per render ---------------------------------------------------------------

  function prepareDrawing() {
    var svg = drawing();
    var drawn = svg && !svg.dataset.fit && viewBox(svg);
    if (!drawn) return;
    // Size comes from CSS (the whole canvas); the viewBox does pan and zoom.
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    var whole = fitBox(svg, drawn);
    svg.dataset.drawn = boxText(drawn);
    svg.dataset.fit = boxText(whole);
    var graph = svg.querySelector("g.graph");
    if (graph) {
      // Nodes above edges, so a click near an arrowhead still hits the node.
      graph.querySelectorAll(":scope > g.node").forEach(function (g) {
        graph.appendChild(g);
      });
    }
    // A wide transparent copy of each edge line is what the pointer hits.
    svg.querySelectorAll("g.edge path").forEach(function (path) {
      var hit = path.cloneNode(false);
      hit.setAttribute("class", "hit");
      hit.removeAttribute("stroke-dasharray");
      path.parentNode.insertBefore(hit, path.nextSibling);
    });
    var before = state.before;
    state.before = null;
    if (workspace().hasAttribute("data-refit")) {
      fit(); // laid out afresh on purpose (Tidy): show all of it
    } else {
      setViewBox(svg, savedBox() || whole, false);
      if (before && before.view === workspace().dataset.view) keepPlaces(svg, before);
    }
  }

  // canvas.js gives the canvas the height left in the window after each render, on
  // every resize of the window and when a panel above it opens or closes. A view
  // that shows the whole drawing (the fit) fits it again; a view someone panned or
  // zoomed, or one whose places a swap just kept, keeps its scale and each point
  // of the drawing where it was on the page.
  function placeOf(svg) {
    var rect = svg.getBoundingClientRect();
    return {
      left: rect.left + window.scrollX,
      top: rect.top + window.scrollY,
      w: rect.width,
      h: rect.height,
    };
  }

  function canvasResized() {
    var svg = drawing();
    var drawn = svg && readBox(svg.dataset.drawn);
    if (!drawn) return;
    var was = shownAt.get(svg);
    var now = placeOf(svg);
    var same = ["left", "top", "w", "h"].every(function (k) {
      return was && Math.abs(was[k] - now[k]) < 0.5;
    });
    var box = viewBox(svg);
    var keep = state.settling || savedBox();
    state.settling = false;
    if (same || !box) {
      // nothing moved
    } else if (!keep || !was || !was.w || !was.h || !now.w || !now.h) {
      var whole = fitBox(svg, drawn);
      svg.dataset.fit = boxText(whole);
      setViewBox(svg, savedBox() || whole, false);
    } else {
      svg.dataset.fit = boxText(fitBox(svg, drawn));
      // The same scale, and each point of the drawing where it was on the page.
      var scale = Math.min(was.w / box.w, was.h / box.h);
      var slackX = (was.w - box.w * scale) / 2;
      var slackY = (was.h - box.h * scale) / 2;
      setViewBox(
        svg,
        {
          x: box.x - (was.left - now.left + slackX) / scale,
          y: box.y - (was.top - now.top + slackY) / scale,
          w: now.w / scale,
          h: now.h / scale,
        },
        Boolean(savedBox()),
      );
    }
    var reveal = state.reveal;
    state.reveal = null;
    if (reveal) setViewBox(svg, revealed(svg, reveal), Boolean(savedBox()));
  }

  // --- a still canvas across swaps ----------------------------------------------------
  // The server draws a changed chain with every node it had where it was
  // (chains/core/layout.py), but the drawing around them may grow, which moves
  // the SVG's coordinates. So the place on the page of each node's shape is noted
  // before a swap, and the new drawing is shown at the same scale, shifted so
  // that the nodes both have sit where they sat. A node the edit added that
  // would lie outside a canvas showing the whole drawing is then brought into
  // view (canvasResized); a view someone panned or zoomed is left as it is.

  function shapeOf(g) {
    return g.querySelector("ellipse, polygon, path") || g;
  }

  // On the page, not the window: a swap may scroll the page (a form's autofocus).
  function centres(svg) {
    var at = {};
    svg.querySelectorAll("g.node[data-key]").forEach(function (g) {
      var r = shapeOf(g).getBoundingClientRect();
      at[g.dataset.key] = {
        x: r.left + r.width / 2 + window.scrollX,
        y: r.top + r.height / 2 + window.scrollY,
      };
    });
    return at;
  }

  function placesNow() {
    var svg = drawing();
    var ws = workspace();
    var geo = svg && geometry(svg);
    if (!geo || !ws) return null;
    return {
      view: ws.dataset.view,
      box: geo.box,
      scale: geo.scale,
      at: centres(svg),
      chosen: Boolean(savedBox()), // a view someone panned or zoomed, not the fit
    };
  }

  function keepPlaces(svg, before) {
    // The same scale as before, even if the canvas changed size.
    var rect = svg.getBoundingClientRect();
    var w = rect.width / before.scale || before.box.w;
    var h = rect.height / before.scale || before.box.h;
    var box = { x: before.box.x, y: before.box.y, w: w, h: h };
    setViewBox(svg, box, false);
    var geo = geometry(svg);
    var now = centres(svg);
    var dx = [];
    var dy = [];
    var added = [];
    Object.keys(now).forEach(function (key) {
      var then = before.at[key];
      if (!then) return added.push(key);
      dx.push(now[key].x - then.x);
      dy.push(now[key].y - then.y);
    });
    if (!dx.length || !geo) return;
    // The median: after an edit laid out afresh (a step moved), most nodes still align.
    box.x += median(dx) / geo.scale;
    box.y += median(dy) / geo.scale;
    // A fit stays a fit for what comes later (a resize fits again), just shifted now.
    setViewBox(svg, box, before.chosen);
    // Until the canvas has its size for this render, the places are kept whatever
    // moves it; then a new node is brought into view (canvasResized), unless the view
    // is one someone chose: that stays as it was.
    state.settling = true;
    state.reveal = before.chosen ? null : added[0] || null;
  }

  function median(values) {
    var sorted = values.slice().sort(function (a, b) {
      return a - b;
    });
    return sorted[Math.floor(sorted.length / 2)];
  }

  // The view box, panned as little as takes to show the node `key` whole (with a small
  // margin when it has to move at all), unless it cannot fit.
  function revealed(svg, key) {
    var geo = geometry(svg);
    var node = svg.querySelector('g.node[data-key="' + CSS.escape(key) + '"]');
    var r = node && shapeOf(node).getBoundingClientRect();
    var view = svg.getBoundingClientRect();
    if (!geo || !r || r.width > view.width || r.height > view.height) return geo && geo.box;
    var margin = 8;
    var dx = 0;
    var dy = 0;
    if (r.left < view.left) dx = r.left - view.left - margin;
    else if (r.right > view.right) dx = r.right - view.right + margin;
    if (r.top < view.top) dy = r.top - view.top - margin;
    else if (r.bottom > view.bottom) dy = r.bottom - view.bottom + margin;
    var box = geo.box;
    return { x: box.x + dx / geo.scale, y: box.y + dy / geo.scale, w: box.w, h: box.h };
  }

  function rendered() {
    var ws = workspace();
    if (!ws) return;
    // htmx wires a swapped-in workspace's forms only as it settles: until this mark is
    // set, a click submits the plain form (the whole page), so tests wait for it. The
    // old workspace is ready too until it is replaced: a test that waits for an answer
    // waits for a higher data-render count (one per workspace drawn on this page).
    renders += 1;
    ws.setAttribute("data-ready", "");
    ws.setAttribute("data-render", String(renders));
    prepareDrawing();
    showMode();
    var current = new URLSearchParams(location.search).get("select") || "";
    if (state.pushing) {
      history.pushState({ workspace: true }, "", state.pushing);
      state.pushing = null;
    } else if (history.state === null) {
      history.replaceState({ workspace: true }, "");
    } else if (current !== ws.dataset.select && history.state.workspace) {
      // An edit moved the selection (a delete clears it): keep reloads truthful.
      history.replaceState({ workspace: true }, "", pageUrl(ws.dataset.select));
    }
    if (state.refocus) {
      state.refocus = false;
      var c = canvas();
      if (c && (document.activeElement === document.body || !document.activeElement)) {
        c.focus({ preventScroll: true });
      }
    }
  }

  // --- events ------------------------------------------------------------------------

  function onClick(event) {
    if (state.swallowClick) {
      state.swallowClick = false;
      if (canvas() && canvas().contains(event.target)) return;
    }
    var target = event.target;
    if (!(target instanceof Element) || !workspace()) return;
    var dismiss = target.closest("#workspace [data-dismiss]");
    if (dismiss) {
      var note = document.getElementById(dismiss.dataset.dismiss);
      if (note) note.remove();
      return;
    }
    var modeButton = target.closest("#workspace [data-mode]");
    if (modeButton) {
      setMode(state.mode === modeButton.dataset.mode ? null : modeButton.dataset.mode);
      return;
    }
    if (target.closest("#workspace [data-zoom='fit']")) {
      fit();
      return;
    }
    var g = elementAt(target);
    if (g && g.classList.contains("edge")) g = nearestEdge(event.clientX, event.clientY) || g;
    if (g) {
      event.preventDefault();
      // An edge whose key the server could not read back has no data-key; its id still selects it.
      if (state.mode) connectClick(g);
      else selectKey(g.dataset.key || g.id);
      return;
    }
    var link = target.closest(SOFT_LINKS);
    var plain = !(event.ctrlKey || event.metaKey || event.shiftKey || event.altKey);
    if (link && event.button === 0 && plain) {
      event.preventDefault();
      go(link.href);
    }
  }

  function onKeydown(event) {
    var ws = workspace();
    if (!ws || event.defaultPrevented) return;
    var field = inField(event.target);
    var command = event.ctrlKey || event.metaKey;
    if (event.key === "Escape") {
      if (state.mode) {
        event.preventDefault();
        setMode(null);
      } else if (!field && ws.dataset.select) {
        event.preventDefault();
        state.refocus = true;
        selectKey("");
      }
    } else if ((event.key === "Delete" || event.key === "Backspace") && !field && !command) {
      if (submit(document.getElementById("delete-selection"))) event.preventDefault();
    } else if (command && !event.altKey && !field && event.key.toLowerCase() === "z") {
      var which = event.shiftKey ? "redo" : "undo";
      var form = ws.querySelector(".ws-tools form[action$='/" + which + "']");
      event.preventDefault();
      submit(form);
    }
  }

  function onPointerDown(event) {
    var c = canvas();
    state.swallowClick = false;
    if (!c || event.button !== 0 || !c.contains(event.target) || !drawing()) return;
    state.pan = {
      id: event.pointerId,
      x: event.clientX,
      y: event.clientY,
      geo: geometry(drawing()),
      moved: false,
    };
  }

  function onPointerMove(event) {
    var pan = state.pan;
    if (!pan || event.pointerId !== pan.id || !pan.geo) return;
    var dx = event.clientX - pan.x;
    var dy = event.clientY - pan.y;
    if (!pan.moved) {
      if (Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
      pan.moved = true;
      canvas().classList.add("panning");
      canvas().setPointerCapture(pan.id);
    }
    var box = pan.geo.box;
    var s = pan.geo.scale;
    setViewBox(drawing(), { x: box.x - dx / s, y: box.y - dy / s, w: box.w, h: box.h }, true);
  }

  function onPointerUp(event) {
    var pan = state.pan;
    if (!pan || event.pointerId !== pan.id) return;
    state.pan = null;
    if (pan.moved) {
      state.swallowClick = true;
      var c = canvas();
      if (c) {
        c.classList.remove("panning");
        if (c.hasPointerCapture(pan.id)) c.releasePointerCapture(pan.id);
      }
    }
  }

  function onWheel(event) {
    var c = canvas();
    var svg = drawing();
    if (!c || !svg || !c.contains(event.target)) return;
    event.preventDefault();
    var delta = event.deltaY * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1);
    zoom(svg, event.clientX, event.clientY, Math.exp(delta * 0.0015));
  }

  // --- verdict rows and steps: drag to reorder ----------------------------------------
  // An item that can move carries data-move-op (move_row, move_action), data-move-id and
  // data-index, its place in its list; dropping it on another sends the edit to there.

  function movableAt(target) {
    return target instanceof Element ? target.closest("[data-move-op]") : null;
  }

  function clearDropMarks() {
    document.querySelectorAll("[data-move-op].drop-target, [data-move-op].dragging").forEach(
      function (item) {
        item.classList.remove("drop-target", "dragging");
      },
    );
  }

  function onDragStart(event) {
    var item = movableAt(event.target);
    if (!item) return;
    state.dragged = item;
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", item.dataset.moveId);
    item.classList.add("dragging");
  }

  function onDragOver(event) {
    var item = movableAt(event.target);
    var dragged = state.dragged;
    if (!item || !dragged || item.dataset.moveOp !== dragged.dataset.moveOp) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    if (!item.classList.contains("drop-target")) {
      clearDropMarks();
      dragged.classList.add("dragging");
      item.classList.add("drop-target");
    }
  }

  function onDrop(event) {
    var item = movableAt(event.target);
    var dragged = state.dragged;
    if (!item || !dragged || item.dataset.moveOp !== dragged.dataset.moveOp) return;
    event.preventDefault();
    clearDropMarks();
    state.dragged = null;
    if (item.dataset.index === dragged.dataset.index) return;
    edit(dragged.dataset.moveOp, { id: dragged.dataset.moveId, index: Number(item.dataset.index) });
  }

  function onDragEnd() {
    state.dragged = null;
    clearDropMarks();
  }

  // --- for static/js/canvas.js (toolbar zoom, drag-to-connect) ----------------------

  window.chainWorkspace = {
    edit: edit,
    setViewBox: function (box) {
      var svg = drawing();
      if (svg) setViewBox(svg, box, true);
    },
    zoom: function (factor) {
      var c = canvas();
      var svg = drawing();
      if (!c || !svg) return;
      var rect = c.getBoundingClientRect();
      zoom(svg, rect.left + rect.width / 2, rect.top + rect.height / 2, factor);
    },
    fit: fit,
    resized: canvasResized,
  };

  // --- wiring ------------------------------------------------------------------------

  document.addEventListener("click", onClick);
  document.addEventListener("keydown", onKeydown);
  document.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointermove", onEdgeHover);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  document.addEventListener("wheel", onWheel, { passive: false });
  document.addEventListener("dragstart", onDragStart);
  document.addEventListener("dragover", onDragOver);
  document.addEventListener("drop", onDrop);
  document.addEventListener("dragend", onDragEnd);
  window.addEventListener("popstate", function (event) {
    if (event.state && event.state.workspace && workspace()) load(location.href, false);
  });
  document.addEventListener("htmx:beforeRequest", requestStarts);
  document.addEventListener("htmx:afterRequest", requestEnds);
  document.addEventListener("htmx:beforeSwap", swapStarts);
  htmx.onLoad(function (element) {
    var holds = element.querySelector && element.querySelector("#workspace");
    if (element.id === "workspace" || holds) rendered();
  });
})();
