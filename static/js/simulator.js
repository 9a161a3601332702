// The simulator page: keep the step the run waits on in view on the graph,
// after the first load and after every htmx swap of the run.
(function () {
  "use strict";

  function centreOnCursor() {
    const canvas = document.getElementById("sim-canvas");
    const cursor = canvas && canvas.querySelector("g.sim-cursor, g.sim-landed");
    if (!cursor) return;
    const box = cursor.getBoundingClientRect();
    const frame = canvas.getBoundingClientRect();
    canvas.scrollLeft += box.left + box.width / 2 - (frame.left + frame.width / 2);
    canvas.scrollTop += box.top + box.height / 2 - (frame.top + frame.height / 2);
  }

  document.addEventListener("DOMContentLoaded", centreOnCursor);
  document.addEventListener("htmx:afterSettle", centreOnCursor);
})();
