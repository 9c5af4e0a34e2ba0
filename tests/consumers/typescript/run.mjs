// Runs every-export.ts for real (Node 24 strips the types): the file that type-checks must also work.
const { main } = await import('./every-export.ts');
const checks = await main();
if (!(checks > 0)) throw new Error(`every-export.ts ran ${checks} checks`);
console.log(`typescript: every-export.ts ran, ${checks} assertions`);
