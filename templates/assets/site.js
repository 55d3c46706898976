/* arena site: sortable tables. Click a column header (or press Enter on it) to sort by
   it; again to reverse. Cells may carry data-value to sort by a raw number. */
(function () {
  "use strict";
  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (numeric) { var n = parseFloat(raw); return isNaN(n) ? -Infinity : n; }
    return raw.toLowerCase();
  }
  function sortBy(table, header) {
    var headers = table.tHead.rows[0].cells;
    var index = Array.prototype.indexOf.call(headers, header);
    var numeric = header.getAttribute("data-type") === "num";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
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
