// Lints the APPSYNC_JS resolvers with AWS's rules for that runtime (make
// test runs it): code the runtime would reject fails here, before a deploy.
import appsync from '@aws-appsync/eslint-plugin';

export default [
  { files: ['**/*.js'] },
  { ignores: ['node_modules/', 'eslint.config.mjs'] },
  { languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
  appsync.configs.recommended,
];
