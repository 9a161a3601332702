/* The import page (templates/chains/import.html).
 *
 * Expects from the server: problem links `a[data-line]` whose href is
 * `#line-N` (an anchor in the numbered listing of the submitted text, which
 * works without this script) and the form's `textarea#document-text` holding
 * that same text. With this script a click also selects line N in the
 * textarea, so the problem can be fixed where the text is edited.
 */
(function () {
  "use strict";

  function lineRange(text, number) {
    const lines = text.split("\n");
    const index = Math.min(Math.max(number, 1), lines.length) - 1;
    let start = 0;
    for (let i = 0; i < index; i += 1) start += lines[i].length + 1;
    return [start, start + lines[index].length, index];
  }

  function selectLine(textarea, number) {
    const [start, end, index] = lineRange(textarea.value, number);
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 18;
    textarea.focus({ preventScroll: true });
    textarea.setSelectionRange(start, end);
    textarea.scrollTop = Math.max(0, (index - 3) * lineHeight);
    textarea.scrollLeft = 0;
    textarea.scrollIntoView({ block: "center" });
  }

  // The listing opens at the first error rather than at line 1 (the page stays put).
  const listing = document.querySelector(".source-lines");
  const firstError =
    listing && (listing.querySelector("li.marked.severity-error") || listing.querySelector("li.marked"));
  if (firstError && !location.hash) {
    listing.scrollTop = Math.max(0, firstError.offsetTop - listing.clientHeight / 3);
  }

  document.addEventListener("click", function (event) {
    const link = event.target.closest("a[data-line]");
    const textarea = document.getElementById("document-text");
    if (!link || !textarea || !textarea.value) return;
    event.preventDefault();
    // Keep the anchor's effect too: the listing marks the line (:target).
    history.replaceState(null, "", link.getAttribute("href"));
    const target = document.querySelector(link.getAttribute("href"));
    if (target) target.scrollIntoView({ block: "nearest" });
    selectLine(textarea, Number(link.dataset.line));
  });
})();
