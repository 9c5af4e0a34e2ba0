import { createElement as h } from 'react';

export const metadata = { title: 'steadfast in Next.js' };

export default function RootLayout({ children }) {
  return h('html', { lang: 'en' }, h('body', null, children));
}
