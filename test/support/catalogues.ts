// The UI's message catalogues (plain JS modules served to the browser), typed for the tests.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UI_ROOT } from '../../src/http/routes/ui.js';

export type Entry = string | Record<string, string>;
export type Catalogue = Record<string, Entry>;

async function load(lang: string): Promise<Catalogue> {
  const url = pathToFileURL(join(UI_ROOT, 'assets', 'js', 'i18n', `${lang}.js`)).href;
  return ((await import(url)) as { default: Catalogue }).default;
}

export const en = await load('en');
export const ru = await load('ru');
