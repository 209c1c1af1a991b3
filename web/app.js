// Agora's web client: the entry module.
import { api } from "./api.js";

document.getElementById("app").textContent = "";
api;
