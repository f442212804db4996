// The inspector's only script: live filtering of the memory table while typing, and a
// confirmation before destructive forms. Pages work without it (filters also run on the server).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("q");
  const table = document.querySelector("table[data-filterable]");
  if (box && table) {
    const count = document.querySelector("p.count");
    const total = table.tBodies[0].rows.length;
    box.addEventListener("input", () => {
      const needle = box.value.trim().toLowerCase();
      let shown = 0;
      for (const row of table.tBodies[0].rows) {
        row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
        shown += row.hidden ? 0 : 1;
      }
      if (count) count.textContent = needle === "" ? `${total} memories` : `${shown} of ${total} memories match`;
    });
  }
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
});
