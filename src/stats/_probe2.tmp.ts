import { betaIncomplete, logBeta } from './special.js';
const dof = 1e8, t = -3;
const t2 = t * t;
const x = dof / (dof + t2), y = t2 / (dof + t2);
console.log(x, y, (dof / 2 + 1) / (dof / 2 + 2.5), logBeta(dof / 2, 0.5));
console.log(0.5 * betaIncomplete(x, y, dof / 2, 0.5));
