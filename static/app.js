// mirrorscope: Collection and Replica links expand in place.
// Without this script they are plain links to the expansion pages. With it, a
// click fetches that page, inserts its expansion under the entry, and records
// the open expansions in the URL (`expand=c12,r3-40`), so back, forward,
// reload and shared links show the same state (the server renders them too).
"use strict";

(function () {
  function openTokens(href) {
    const value = new URL(href, location.href).searchParams.get("expand") || "";
    return value.split(",").filter(Boolean);
  }

  function withTokens(tokens) {
    const url = new URL(location.href);
    if (tokens.length) {
      url.searchParams.set("expand", tokens.join(","));
    } else {
      url.searchParams.delete("expand");
    }
    return url;
  }

  function expansionOf(result, token) {
    for (const section of result.querySelectorAll(".expansion")) {
      if (section.dataset.expand === token) return section;
    }
    return null;
  }

  function linkOf(token) {
    for (const link of document.querySelectorAll("a[data-expand]")) {
      if (link.dataset.expand === token) return link;
    }
    return null;
  }

  async function expand(link) {
    const result = link.closest(".result");
    const token = link.dataset.expand;
    link.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(link.href, { headers: { Accept: "text/html" } });
      if (!response.ok) throw new Error("HTTP " + response.status);
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const section = page.querySelector(".expansion");
      if (!section || expansionOf(result, token)) return;
      section.dataset.expand = token;
      result.appendChild(document.importNode(section, true));
      link.setAttribute("aria-expanded", "true");
    } finally {
      link.removeAttribute("aria-busy");
    }
  }

  function collapse(link) {
    const result = link.closest(".result");
    const section = expansionOf(result, link.dataset.expand);
    if (section) section.remove();
    link.setAttribute("aria-expanded", "false");
  }

  // Brings the page to the state its URL names.
  async function sync() {
    const open = new Set(openTokens(location.href));
    for (const link of document.querySelectorAll(".result a[data-expand]")) {
      const token = link.dataset.expand;
      const shown = expansionOf(link.closest(".result"), token) !== null;
      if (open.has(token) && !shown) await expand(link);
      if (!open.has(token) && shown) collapse(link);
    }
  }

  document.addEventListener("click", async function (event) {
    const link = event.target.closest(".result a.collection-link[data-expand], .result a.replica-link[data-expand]");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    const token = link.dataset.expand;
    let tokens = openTokens(location.href);
    try {
      if (tokens.includes(token)) {
        collapse(link);
        tokens = tokens.filter((open) => open !== token);
      } else {
        await expand(link);
        tokens.push(token);
      }
      history.pushState({ expand: tokens }, "", withTokens(tokens));
    } catch (error) {
      // The expansion could not be fetched: go to its page instead.
      location.href = link.href;
    }
  });

  window.addEventListener("popstate", function () {
    sync();
  });

  document.addEventListener("DOMContentLoaded", function () {
    for (const token of openTokens(location.href)) {
      const link = linkOf(token);
      if (link) link.setAttribute("aria-expanded", "true");
    }
    for (const link of document.querySelectorAll(".result a[data-expand]")) {
      if (!link.hasAttribute("aria-expanded")) link.setAttribute("aria-expanded", "false");
    }
  });
})();
