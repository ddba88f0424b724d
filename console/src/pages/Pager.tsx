export const PAGE_SIZE = 50;

/** Previous / next over pages counted from 0. */
export function Pager({ label, page, pages, onPage }: { label: string; page: number; pages: number; onPage(p: number): void }) {
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page === 0}>
        Previous
      </button>
      <span>
        Page {page + 1} of {pages}
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= pages - 1}>
        Next
      </button>
    </nav>
  );
}
