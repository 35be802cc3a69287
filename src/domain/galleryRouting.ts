// SPEC §22: taking a gallery template routes its event or cart step, unless the project already routes
// it. One rule for every way of taking one (POST /api/templates, the admin UI's gallery), so the API and
// the UI cannot disagree about when a route is taken.

/** What taking the gallery template `name` for `routingKey` does to the project's routing. */
export type GalleryRouting =
  | { status: 'routed' } // the key was free: it now sends this template
  | { status: 'already' } // it already sent this template
  | { status: 'taken'; current: string }; // another template has it: the administrator decides

export function galleryRouting(
  routes: Readonly<Record<string, string>>,
  routingKey: string,
  name: string,
): GalleryRouting {
  const current = routes[routingKey];
  if (current === undefined) return { status: 'routed' };
  return current === name ? { status: 'already' } : { status: 'taken', current };
}
