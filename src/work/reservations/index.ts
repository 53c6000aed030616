import { pathReleaseTool, pathReserveTool } from "./reserve";
import { pathReservationsTool } from "./query";

export const reservationTools = [pathReserveTool, pathReservationsTool, pathReleaseTool];
