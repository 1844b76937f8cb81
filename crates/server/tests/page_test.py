"""The page of `plexus serve` in headless Chromium (run by page.sh).

Checks: no console errors or page errors; the graphs table lists GRAPH and
its degree plot draws; a PageRank job submitted through the form shows a
progress bar that reaches 100 % and, once done, its result's plot; saves a
screenshot.
"""
import argparse
import re
import sys
import time

from playwright.sync_api import sync_playwright

TIMEOUT_MS = 60_000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--screenshot", required=True)
    a = ap.parse_args()
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.goto(a.url)

        # The graphs are listed; a click plots the degree distribution.
        page.wait_for_selector("#graphs tbody tr")
        assert a.graph in page.inner_text("#graphs"), page.inner_text("#graphs")
        page.click(f"#graphs tbody button:text-is('{a.graph}')")
        page.wait_for_selector("#degree-plot rect")
        assert "vertices" in page.inner_text("#graph-info")

        # A job through the form: progress, then done with its plot.
        page.select_option("#submit select[name=graph]", a.graph)
        page.select_option("#submit select[name=algorithm]", "pagerank")
        page.fill("#submit input[name=params]", '{"iterations": 400}')
        page.click("#submit button:not([type=button])")
        page.wait_for_function("document.querySelector('#submit-msg').textContent.includes('submitted')")
        m = re.search(r"job (\d+) submitted", page.inner_text("#submit-msg"))
        assert m, page.inner_text("#submit-msg")
        job = m.group(1)
        seen: list[int] = []
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            pcts = page.eval_on_selector_all(
                f"tr[data-id='{job}'] .bar", "bars => bars.map(b => Number(b.dataset.pct))"
            )
            seen.extend(pcts)
            state = page.eval_on_selector_all(
                f"#finished tr[data-id='{job}'] td:nth-child(4)", "tds => tds.map(t => t.textContent)"
            )
            if state and state[0].startswith("done"):
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"job {job} did not finish on the page")
        seen.extend(page.eval_on_selector_all(
            f"tr[data-id='{job}'] .bar", "bars => bars.map(b => Number(b.dataset.pct))"))
        assert seen and max(seen) == 100, f"progress seen: {seen}"
        assert all(0 <= x <= 100 for x in seen), seen
        page.wait_for_selector("#result-plot rect")
        assert f"job {job}" in page.inner_text("#result-title"), page.inner_text("#result-title")
        assert page.inner_text("#result-top").strip(), "no top-k table"
        page.screenshot(path=a.screenshot, full_page=True)
        browser.close()
    print(f"page test: progress values seen {sorted(set(seen))}; screenshot {a.screenshot}")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
