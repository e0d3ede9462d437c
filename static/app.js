// mirrorscope: expansions open, page and close in place.
// Without this script every link is a plain link: the results page with the
// expansion open (or its next rows), or the expansion's own page. With it, a
// click fetches the expansion's own page, puts its section under the entry,
// and records the open expansions in the URL (`expand=c12,r3-40p2,s7`), so
// back, forward, reload and shared links show the same state (the server
// renders them too). Space opens an expansion link as Enter does, and a
// live region says what was opened.
"use strict";

(function () {
  // A token without its page: `c12p2` -> `c12`.
  function base(token) {
    return token.replace(/p\d+$/, "");
  }

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
      if (base(section.dataset.expand) === base(token)) return section;
    }
    return null;
  }

  function entryLinkOf(result, token) {
    for (const link of result.querySelectorAll(".links a[data-expand]")) {
      if (link.dataset.expand === base(token)) return link;
    }
    return null;
  }

  function announce(text) {
    const region = document.getElementById("announce");
    if (region) region.textContent = text;
  }

  async function fetchSection(src) {
    const response = await fetch(src, { headers: { Accept: "text/html" } });
    if (!response.ok) throw new Error("HTTP " + response.status);
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const section = page.querySelector(".expansion");
    if (!section) throw new Error("no expansion");
    // Under an entry, the heading is one level below the entry's.
    const heading = section.querySelector(".expansion-title");
    if (heading && heading.tagName === "H2") {
      const h3 = page.createElement("h3");
      h3.className = heading.className;
      h3.innerHTML = heading.innerHTML;
      heading.replaceWith(h3);
    }
    return document.importNode(section, true);
  }

  function describe(section) {
    const heading = section.querySelector(".expansion-title");
    return heading ? heading.textContent.trim() : "Expanded";
  }

  async function expand(link, token, src) {
    const result = link.closest(".result");
    link.setAttribute("aria-busy", "true");
    try {
      const section = await fetchSection(src);
      section.dataset.expand = token;
      const shown = expansionOf(result, token);
      if (shown) {
        shown.replaceWith(section);
      } else {
        result.appendChild(section);
      }
      const entryLink = entryLinkOf(result, token);
      if (entryLink) entryLink.setAttribute("aria-expanded", "true");
      announce(describe(section));
      return section;
    } finally {
      link.removeAttribute("aria-busy");
    }
  }

  function collapse(result, token) {
    const section = expansionOf(result, token);
    if (section) section.remove();
    const entryLink = entryLinkOf(result, token);
    if (entryLink) {
      entryLink.setAttribute("aria-expanded", "false");
      entryLink.focus();
    }
    announce("Closed");
  }

  function replaceToken(tokens, token) {
    const kept = tokens.filter((open) => base(open) !== base(token));
    return kept.length === tokens.length ? kept.concat([token]) : tokens.map((open) => (base(open) === base(token) ? token : open));
  }

  // Brings the page to the state its URL names.
  async function sync() {
    const open = openTokens(location.href);
    for (const result of document.querySelectorAll(".result")) {
      for (const link of result.querySelectorAll(".links a[data-expand]")) {
        const wanted = open.find((token) => base(token) === link.dataset.expand);
        const section = expansionOf(result, link.dataset.expand);
        if (wanted && (!section || section.dataset.expand !== wanted)) {
          const src = new URL(link.href, location.href);
          const page = wanted.match(/p(\d+)$/);
          if (page) src.searchParams.set("page", page[1]);
          await expand(link, wanted, src.toString());
        }
        if (!wanted && section) collapse(result, link.dataset.expand);
      }
    }
  }

  function plainClick(event) {
    return event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey;
  }

  document.addEventListener("click", async function (event) {
    if (!plainClick(event)) return;
    const entryLink = event.target.closest(".result .links a[data-expand]");
    const step = event.target.closest(".result .expansion a.expansion-step");
    const close = event.target.closest(".result .expansion a.expansion-close");
    if (!entryLink && !step && !close) return;
    event.preventDefault();
    const link = entryLink || step || close;
    const result = link.closest(".result");
    let tokens = openTokens(location.href);
    try {
      if (close) {
        collapse(result, close.dataset.token);
        tokens = tokens.filter((open) => base(open) !== base(close.dataset.token));
      } else if (step) {
        const section = await expand(step, step.dataset.token, step.dataset.src);
        tokens = replaceToken(tokens, step.dataset.token);
        const heading = section.querySelector(".expansion-title");
        if (heading) {
          heading.setAttribute("tabindex", "-1");
          heading.focus();
        }
      } else {
        const token = entryLink.dataset.expand;
        if (expansionOf(result, token)) {
          collapse(result, token);
          tokens = tokens.filter((open) => base(open) !== token);
        } else {
          await expand(entryLink, token, entryLink.href);
          tokens = replaceToken(tokens, token);
        }
      }
      history.pushState({ expand: tokens }, "", withTokens(tokens));
    } catch (error) {
      // The expansion could not be fetched: go to its page instead.
      location.href = link.href;
    }
  });

  // Space on an expansion link opens it, as on a button.
  document.addEventListener("keydown", function (event) {
    if (event.key !== " ") return;
    const link = event.target.closest && event.target.closest(".result a[data-expand], .result a.expansion-step, .result a.expansion-close");
    if (!link) return;
    event.preventDefault();
    link.click();
  });

  window.addEventListener("popstate", function () {
    sync();
  });

  document.addEventListener("DOMContentLoaded", function () {
    const open = openTokens(location.href).map(base);
    for (const link of document.querySelectorAll(".result .links a[data-expand]")) {
      link.setAttribute("aria-expanded", open.includes(link.dataset.expand) ? "true" : "false");
    }
  });
})();
