// Follows a command's options object from the command line into the code,
// through the TypeScript checker: every function that receives the object
// whole, or inside another object, is a stay; the modules those functions
// are in are its rooms; a hop into a module on a higher floor than the one
// it came from is a climb back up. CONTRIBUTING.md's "Each function takes
// what it uses" states the counts and the bounds test/optionsTrail.test.ts
// holds them to.

import { createRequire } from "node:module";
import { join, relative } from "node:path";
import ts from "typescript";
import { isMain, projectRoot } from "./project.mjs";

/**
 * provider/src's layers, from the table beside them (read, not imported: it is provider/src's, not a script).
 * @type {string[][]}
 */
const LAYERS = createRequire(import.meta.url)("../provider/src/layers.cjs");

/** Where each command's options start: the function that receives them from the command line, and the parameter. */
const TRAILS = [
  {
    command: "preview, up, refresh, drift, destroy, status, shards",
    file: "fleet/cli/commands.ts",
    fn: "fleetCommand",
    param: 0,
  },
  { command: "import", file: "fleet/cli/commands.ts", fn: "importCommand", param: 0 },
  { command: "enforce", file: "fleet/cli/commands.ts", fn: "enforceCommand", param: 0 },
  { command: "report", file: "fleet/cli/commands.ts", fn: "reportCommand", param: 0 },
];

/** The functions whose parameter may still be the options whole: the command layer and the runner (CONTRIBUTING.md). */
const OPTIONS_EDGE = /^fleet\/(cli\/[^/]+|runner)\.ts$/;

const SOURCE = join(projectRoot, "provider", "src");

/** CONTRIBUTING's layers, the fleet's split into floors: its rooms, its own files above them, its command layer on top. */
const FLOORS = LAYERS.flatMap((names) =>
  names.includes("fleet") ? [["fleet/<room>"], ["fleet/<file>"], ["fleet/cli"]] : [names],
);

/** A module's floor: its layer's place in the table, the fleet split into its rooms, its own files and its command layer. */
function floorOf(module) {
  const parts = module.split("/");
  let name = parts[0];
  if (name === "fleet") name = parts.length === 2 ? "fleet/<file>" : parts[1] === "cli" ? "fleet/cli" : "fleet/<room>";
  const floor = FLOORS.findIndex((names) => names.includes(name));
  if (floor < 0) throw new Error(`${module}: no floor in scripts/options-trail.mjs's table`);
  return floor;
}

function program() {
  const configPath = join(projectRoot, "provider", "tsconfig.json");
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} },
  );
  return ts.createProgram({ rootNames: config.fileNames, options: config.options });
}

const moduleOf = (node) => relative(SOURCE, node.getSourceFile().fileName);

const isFunctionLike = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isConstructorDeclaration(node);

function functionName(node) {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.getText() ?? "class"} constructor`;
  if (ts.isVariableDeclaration(node.parent)) return node.parent.name.getText();
  return "(function)";
}

/** The function a call's callee names, when it is declared in provider/src. */
function calleeOf(checker, call) {
  let symbol = checker.getSymbolAtLocation(ts.isNewExpression(call) ? call.expression : call.expression);
  if (!symbol) return undefined;
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  for (const declaration of symbol.declarations ?? []) {
    if (!declaration.getSourceFile().fileName.startsWith(SOURCE)) return undefined;
    if (ts.isClassDeclaration(declaration))
      return declaration.members.find((member) => ts.isConstructorDeclaration(member));
    if (isFunctionLike(declaration) && declaration.body) return declaration;
    if (ts.isVariableDeclaration(declaration) && declaration.initializer && isFunctionLike(declaration.initializer))
      return declaration.initializer;
  }
  return undefined;
}

const key = (path) => path.join(".");

/**
 * Follows one trail. Each tracked value is a symbol with the paths at which
 * it holds the options: `[]` the object itself, `["options"]` a context
 * whose `options` property holds it. Spreading the object makes a copy with
 * all of it, which still counts as the object.
 */
function follow(checker, start, startParam) {
  const stays = new Map();
  const hops = [];
  // The command receives its invocation, whose `options` are the trail's.
  const queue = [{ fn: start, param: startParam, paths: [["options"]], from: undefined }];
  const seen = new Set();

  while (queue.length > 0) {
    const { fn, param, paths, from } = queue.shift();
    const id = `${moduleOf(fn)}:${fn.pos}:${param}:${paths.map(key).join("|")}`;
    if (from) hops.push({ from, to: moduleOf(fn), fn: functionName(fn) });
    if (seen.has(id)) continue;
    seen.add(id);
    const stayKey = `${moduleOf(fn)}#${functionName(fn)}`;
    const stay = stays.get(stayKey) ?? { module: moduleOf(fn), fn: functionName(fn), whole: false };
    stay.whole ||= paths.some((path) => path.length === 0);
    stays.set(stayKey, stay);

    const tracked = new Map();
    const bind = (name, valuePaths) => {
      if (valuePaths.length === 0) return;
      if (ts.isIdentifier(name)) {
        const symbol = checker.getSymbolAtLocation(name);
        if (symbol) tracked.set(symbol, [...(tracked.get(symbol) ?? []), ...valuePaths]);
        return;
      }
      if (ts.isObjectBindingPattern(name)) {
        for (const element of name.elements) {
          const property = (element.propertyName ?? element.name).getText();
          if (element.dotDotDotToken) bind(element.name, valuePaths);
          else
            bind(
              element.name,
              valuePaths.filter((path) => path[0] === property).map((path) => path.slice(1)),
            );
        }
      }
    };
    const parameter = fn.parameters[param];
    if (!parameter) continue;
    bind(parameter.name, paths);

    const pathsOf = (expression) => {
      if (
        ts.isParenthesizedExpression(expression) ||
        ts.isAsExpression(expression) ||
        ts.isNonNullExpression(expression)
      )
        return pathsOf(expression.expression);
      if (ts.isAwaitExpression(expression)) return pathsOf(expression.expression);
      if (ts.isIdentifier(expression)) {
        const symbol = checker.getSymbolAtLocation(expression);
        return (symbol && tracked.get(symbol)) ?? [];
      }
      if (ts.isPropertyAccessExpression(expression)) {
        const name = expression.name.getText();
        return pathsOf(expression.expression)
          .filter((path) => path[0] === name)
          .map((path) => path.slice(1));
      }
      if (ts.isConditionalExpression(expression))
        return [...pathsOf(expression.whenTrue), ...pathsOf(expression.whenFalse)];
      if (
        ts.isBinaryExpression(expression) &&
        [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(expression.operatorToken.kind)
      )
        return [...pathsOf(expression.left), ...pathsOf(expression.right)];
      if (ts.isObjectLiteralExpression(expression)) {
        const found = [];
        for (const property of expression.properties) {
          if (ts.isSpreadAssignment(property)) found.push(...pathsOf(property.expression));
          else if (ts.isShorthandPropertyAssignment(property)) {
            const symbol = checker.getShorthandAssignmentValueSymbol(property);
            const held = (symbol && tracked.get(symbol)) ?? [];
            found.push(...held.map((path) => [property.name.getText(), ...path]));
          } else if (ts.isPropertyAssignment(property))
            found.push(...pathsOf(property.initializer).map((path) => [property.name.getText(), ...path]));
        }
        return found;
      }
      return [];
    };

    const visit = (node) => {
      if (ts.isVariableDeclaration(node) && node.initializer) bind(node.name, pathsOf(node.initializer));
      if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments) {
        const callee = calleeOf(checker, node);
        node.arguments.forEach((argument, index) => {
          const argumentPaths = pathsOf(argument);
          if (callee && argumentPaths.length > 0)
            queue.push({ fn: callee, param: index, paths: argumentPaths, from: moduleOf(fn) });
        });
      }
      ts.forEachChild(node, visit);
    };
    if (fn.body) visit(fn.body);
  }

  const staysList = [...stays.values()];
  const rooms = [...new Set(staysList.map((stay) => stay.module))].sort();
  const climbs = hops.filter((hop) => floorOf(hop.to) > floorOf(hop.from));
  return { stays: staysList, rooms, climbs };
}

function findFunction(source, name) {
  let found;
  const visit = (node) => {
    if (found) return;
    if (isFunctionLike(node) && functionName(node) === name && node.body) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * A function that receives a command's options: its module and name, and whether it takes them whole (not
 * inside another object).
 * @typedef {{ module: string, fn: string, whole: boolean }} OptionsStay
 */

/**
 * One command's options from where they start: every stay, the modules they are in (its rooms), and each hop
 * into a module on a higher floor.
 * @typedef {{ command: string, file: string, fn: string, stays: OptionsStay[], rooms: string[], climbs: { from: string, to: string, fn: string }[] }} OptionsTrail
 */

/**
 * Every trail's stays, rooms and climbs, and the functions outside the edge whose parameter is the options whole.
 * @returns {{ trails: OptionsTrail[], wholeOutsideEdge: string[] }}
 */
export function optionsTrails() {
  const built = program();
  const checker = built.getTypeChecker();
  const trails = TRAILS.map((trail) => {
    const source = built.getSourceFile(join(SOURCE, trail.file));
    const start = source && findFunction(source, trail.fn);
    if (!start) throw new Error(`${trail.file}: no function ${trail.fn}`);
    return { ...trail, ...follow(checker, start, trail.param) };
  });
  return { trails, wholeOutsideEdge: wholeOptionsParameters(built, checker) };
}

/**
 * The parameters outside the edge whose type holds every property of a
 * command's options type: the options whole, whatever the type is called.
 */
function wholeOptionsParameters(built, checker) {
  const fleetOptions = built.getSourceFile(join(SOURCE, "fleet", "fleetOptions.ts"));
  const declaration = fleetOptions?.statements.find(
    (statement) => ts.isInterfaceDeclaration(statement) && statement.name.text === "FleetOptions",
  );
  if (!declaration) throw new Error("fleet/fleetOptions.ts: no FleetOptions");
  const wanted = checker
    .getTypeAtLocation(declaration)
    .getProperties()
    .map((property) => property.name);
  const found = [];
  for (const source of built.getSourceFiles()) {
    if (!source.fileName.startsWith(SOURCE)) continue;
    const module = relative(SOURCE, source.fileName);
    if (OPTIONS_EDGE.test(module)) continue;
    const visit = (node) => {
      if (isFunctionLike(node)) {
        for (const parameter of node.parameters) {
          const names = new Set(
            checker
              .getTypeAtLocation(parameter)
              .getApparentProperties()
              .map((p) => p.name),
          );
          if (wanted.every((name) => names.has(name)))
            found.push(`${module}: ${functionName(node)}(${parameter.name.getText()})`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

if (isMain(import.meta.url)) {
  const { trails, wholeOutsideEdge } = optionsTrails();
  for (const trail of trails) {
    process.stdout.write(
      `${trail.command}: ${trail.stays.length} stays in ${trail.rooms.length} rooms, ${trail.climbs.length} climbs back up\n`,
    );
    for (const stay of trail.stays)
      process.stdout.write(`  ${stay.module} ${stay.fn}${stay.whole ? "" : " (inside another object)"}\n`);
    for (const climb of trail.climbs) process.stdout.write(`  climb: ${climb.from} -> ${climb.to} ${climb.fn}\n`);
  }
  process.stdout.write(`functions outside the edge taking the options whole: ${wholeOutsideEdge.length}\n`);
  for (const line of wholeOutsideEdge) process.stdout.write(`  ${line}\n`);
}
