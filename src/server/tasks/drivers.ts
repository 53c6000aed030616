/** The task drivers this server knows, by the name its task rows record. */
import type { TaskDriver, TaskDrivers } from "../../core/task-driver";
import { INDEX_TASK_DRIVER, indexTaskDriver } from "../../code/index-task";
import { REVIEW_TASK_DRIVER, reviewTaskDriver } from "../../review/reactive/task";
import { BACKGROUND_TASK_DRIVER, backgroundTaskDriver } from "./background";
import { FIXTURE_TASK_DRIVER, fixtureTaskDriver } from "../conformance/fixtures";

const REAL: [string, TaskDriver][] = [
  [INDEX_TASK_DRIVER, indexTaskDriver],
  [REVIEW_TASK_DRIVER, reviewTaskDriver],
  [BACKGROUND_TASK_DRIVER, backgroundTaskDriver],
];
const real = new Map(REAL);
const withFixtures = new Map([...REAL, [FIXTURE_TASK_DRIVER, fixtureTaskDriver]]);

/** The conformance fixtures' driver only where the fixtures are served. */
export const taskDrivers = (fixtures: boolean): TaskDrivers => (fixtures ? withFixtures : real);
