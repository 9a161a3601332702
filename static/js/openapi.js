/*
 * Chain Designer's OpenAPI page (templates/chains/openapi.html): what JavaScript adds.
 *
 * The page works without it: the ticks of the page shown are kept on the
 * server when its form is posted (another page, another filter, Add), and the
 * bar under the list then counts them. This file keeps the bar's count true
 * while the person ticks, before anything is posted, and marks a ticked row.
 * It expects, in the bar, #openapi-ticked-count with data-elsewhere (how many
 * are ticked on other pages, which this page cannot change) and #openapi-here
 * (how many on this page), and the rows' checkboxes as input[name=pick] inside
 * #operations. Events are delegated from the document; no inline handlers.
 */
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLInputElement) || box.name !== "pick") return;
    if (!box.closest("#operations")) return;
    var row = box.closest("tr");
    if (row) row.classList.toggle("ticked", box.checked);
    var count = document.getElementById("openapi-ticked-count");
    var here = document.getElementById("openapi-here");
    if (!count || !here) return;
    var ticked = document.querySelectorAll("#operations input[name=pick]:checked").length;
    count.textContent = String(Number(count.dataset.elsewhere || 0) + ticked);
    here.textContent = String(ticked);
  });
})();
