import { defineConfig } from 'vite';

// Static files for `totem serve --web-root` (default: this directory's dist/).
export default defineConfig({
  base: '/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: true },
});
