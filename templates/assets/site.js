/* arena site: sortable tables. Click a column header (or press Enter on it) to sort by
   it; again to reverse. A first click puts the best first: the largest number first, the
   smallest for places (headers with data-first="ascending": rank, band, average place),
   text from A to Z. Cells may carry data-value to sort by a raw number. */
(function () {
  "use strict";
  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (numeric) { var n = parseFloat(raw); return isNaN(n) ? null : n; }
    return raw.toLowerCase();
  }
  function firstOrder(header) {
    if (header.hasAttribute("data-first")) return header.getAttribute("data-first");
    return header.getAttribute("data-type") === "num" ? "descending" : "ascending";
  }
  function sortBy(table, header) {
    var headers = table.tHead.rows[0].cells;
    var index = Array.prototype.indexOf.call(headers, header);
    var numeric = header.getAttribute("data-type") === "num";
    var now = header.getAttribute("aria-sort");
    var order = now === "ascending" ? "descending" : now === "descending" ? "ascending" : firstOrder(header);
    var sign = order === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x === y) return 0;
      if (x === null) return 1;  // a row without a value goes last either way
      if (y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", order);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header) {
      header.tabIndex = 0;
      header.title = "sort by " + header.textContent;
      header.addEventListener("click", function () { sortBy(table, header); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, header); }
      });
    });
  });
})();
