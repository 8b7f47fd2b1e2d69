// The 3D viewer: a glTF/GLB artifact version rendered with the vendored three.js (static/vendor/three-*, resolved
// through the studio's import map; loaded only when a 3D artifact is opened). Orbit with the mouse (drag to rotate,
// wheel to zoom, right-drag to pan) or the keyboard on the focused canvas (arrow keys rotate, + and - zoom, Home or
// the Reset button frames the model again). Lit by a sky/ground light and two directional lights so any model shows.

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const BACKGROUND = "#eef1f5";
const KEY_STEP = Math.PI / 18; // 10° per arrow key press

let modules = null;
function loadThree() {
  modules ||= Promise.all([
    import("three"),
    import("three/addons/loaders/GLTFLoader.js"),
    import("three/addons/controls/OrbitControls.js"),
  ]).then(([THREE, { GLTFLoader }, { OrbitControls }]) => ({ THREE, GLTFLoader, OrbitControls }));
  return modules;
}

/**
 * The viewer for one model file: returns its element at once; the model loads into it, and the element's
 * data-state goes "loading" → "ready" (or "error", with the reason said in its status line).
 */
export function modelViewer({ url, title, caption }) {
  const canvas = h("canvas", {
    class: "model-canvas",
    tabindex: "0",
    role: "img",
    "aria-label": t("3D view of {title}. Arrow keys rotate, plus and minus zoom, Home resets the view.", { title }),
  });
  const status = h("p", { class: "model-status", role: "status", "aria-live": "polite", text: t("Loading the 3D model…") });
  const reset = h("button", { type: "button", class: "model-reset", disabled: true }, t("Reset view"));
  const element = h(
    "figure",
    { class: "media model-viewer", "data-state": "loading" },
    h("div", { class: "model-stage" }, canvas),
    h("div", { class: "row model-controls" }, reset, status),
    h("figcaption", {}, h("bdi", { text: title }), ` · ${caption} · drag or use the arrow keys to rotate`),
  );
  start({ element, canvas, status, reset, url }).catch((error) => fail(element, status, error));
  return element;
}

function fail(element, status, error) {
  element.dataset.state = "error";
  status.setAttribute("role", "alert");
  status.textContent = t("The 3D model could not be shown: {error}", { error: error && error.message ? error.message : error });
}

/** A scene on the viewer's background, lit so that any model shows (a sky/ground light, a key and a fill). */
function litScene(THREE) {
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(BACKGROUND);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8a84, 1.1));
  const key = new THREE.DirectionalLight(0xffffff, 1.6);
  key.position.set(3, 5, 4);
  const fill = new THREE.DirectionalLight(0xffffff, 0.8);
  fill.position.set(-4, -2, -3);
  scene.add(key, fill);
  return scene;
}

// A model's buffers and images must be inside its own file: data: URIs, or the blob: URLs three.js makes for a
// GLB's embedded images. Anything else would be fetched from wherever the file says, for every member who opens it
// (the server refuses such uploads, workspace/sniffing.py; this also covers files stored before it did).
const EMBEDDED = /^\s*(data|blob):/i;

/** Every `uri` in a glTF JSON document that is not embedded in the file. */
export function externalUris(document) {
  const found = [];
  const pending = [document];
  while (pending.length) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node.filter((value) => value && typeof value === "object"));
    } else if (node && typeof node === "object") {
      if ("uri" in node && !(typeof node.uri === "string" && EMBEDDED.test(node.uri))) found.push(String(node.uri));
      pending.push(...Object.values(node).filter((value) => value && typeof value === "object"));
    }
  }
  return found;
}

/** The JSON description of a .gltf file or of a .glb (its first chunk). */
function gltfDocument(data) {
  const bytes = new Uint8Array(data);
  let json = bytes;
  if (new TextDecoder().decode(bytes.subarray(0, 4)) === "glTF") {
    const view = new DataView(data);
    if (data.byteLength < 20) throw new Error("the glTF binary is cut short");
    json = bytes.subarray(20, 20 + view.getUint32(12, true));
  }
  try {
    return JSON.parse(new TextDecoder().decode(json));
  } catch {
    throw new Error("the file's glTF description is not valid JSON");
  }
}

/** A loading manager that refuses, while loading, any resource URL that is not embedded in the file. */
function embeddedOnly(THREE) {
  const manager = new THREE.LoadingManager();
  manager.setURLModifier((resource) => {
    if (!EMBEDDED.test(resource)) throw new Error(`the model refers to a file outside itself (${resource})`);
    return resource;
  });
  return manager;
}

/** The model's scene: the file is read, its URIs checked before three.js sees it, then parsed in place. */
async function loadModel(THREE, GLTFLoader, url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`the file could not be read (HTTP ${response.status})`);
  const data = await response.arrayBuffer();
  const external = externalUris(gltfDocument(data));
  if (external.length) {
    const count = external.length === 1 ? "a file" : `${external.length} files`;
    throw new Error(`the model refers to ${count} outside itself (${external[0]}); nothing was fetched from there`);
  }
  const loader = new GLTFLoader(embeddedOnly(THREE));
  const gltf = await new Promise((resolve, reject) => loader.parse(data, "", resolve, reject));
  return gltf.scene || gltf.scenes[0];
}

/** Where the camera stands to see the whole model: its bounding sphere, and the distance that fits it. */
function framing(THREE, model, camera) {
  const box = new THREE.Box3().setFromObject(model);
  if (box.isEmpty()) throw new Error("the file holds no geometry to show");
  const sphere = box.getBoundingSphere(new THREE.Sphere());
  const radius = sphere.radius || 1;
  const distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.15;
  camera.near = radius / 100;
  camera.far = radius * 100;
  const place = () => {
    camera.position.copy(sphere.center).add(new THREE.Vector3(1, 0.8, 1.3).normalize().multiplyScalar(distance));
    camera.lookAt(sphere.center);
    camera.updateProjectionMatrix();
  };
  return { sphere, radius, place };
}

// --- grid thumbnails: one shared offscreen renderer (browsers allow few WebGL contexts), one model at a time ----

const THUMB_SIZE = 256;
const thumbnails = new Map(); // file URL → Promise of a PNG data URL
let thumbRenderer = null;
let thumbQueue = Promise.resolve();

/** A still of the model at `url`, framed as the viewer first shows it (a PNG data URL; rejected if it cannot load). */
export function modelThumbnail(url) {
  if (!thumbnails.has(url)) {
    const made = thumbQueue.then(() => renderThumbnail(url));
    thumbQueue = made.catch(() => {});
    thumbnails.set(url, made);
  }
  return thumbnails.get(url);
}

async function renderThumbnail(url) {
  const { THREE, GLTFLoader } = await loadThree();
  thumbRenderer ||= new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  thumbRenderer.outputColorSpace = THREE.SRGBColorSpace;
  thumbRenderer.setSize(THUMB_SIZE, THUMB_SIZE, false);
  const model = await loadModel(THREE, GLTFLoader, url);
  const scene = litScene(THREE);
  scene.add(model);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 1000);
  try {
    framing(THREE, model, camera).place();
    thumbRenderer.render(scene, camera);
    return thumbRenderer.domElement.toDataURL("image/png");
  } finally {
    model.traverse((node) => {
      if (node.geometry) node.geometry.dispose();
      for (const material of [].concat(node.material || [])) material.dispose();
    });
  }
}

async function start({ element, canvas, status, reset, url }) {
  const { THREE, GLTFLoader, OrbitControls } = await loadThree();
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  renderer.outputColorSpace = THREE.SRGBColorSpace;
  const scene = litScene(THREE);
  const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 1000);
  const controls = new OrbitControls(camera, canvas);
  controls.enableDamping = false;

  const render = () => renderer.render(scene, camera);
  const fit = () => {
    const width = canvas.parentElement.clientWidth || 480;
    const height = Math.round(Math.min(Math.max(width * 0.62, 240), 480));
    renderer.setSize(width, height, false);
    canvas.style.width = "100%";
    canvas.style.height = `${height}px`;
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
    render();
  };
  const observer = new ResizeObserver(() => (canvas.isConnected ? fit() : stop()));
  const stop = () => {
    observer.disconnect();
    controls.dispose();
    renderer.dispose();
  };
  observer.observe(canvas.parentElement);
  controls.addEventListener("change", render);

  const model = await loadModel(THREE, GLTFLoader, url);
  if (!canvas.isConnected) return stop(); // the person moved on while it loaded
  scene.add(model);

  // Frame the model: the camera looks at its centre from a distance that fits its bounding sphere.
  const { sphere, radius, place } = framing(THREE, model, camera);
  const home = () => {
    controls.target.copy(sphere.center);
    place();
    controls.update();
    render();
  };
  controls.minDistance = radius * 0.3;
  controls.maxDistance = radius * 20;

  // Arrow keys orbit around the target (OrbitControls' own keys pan); + and - zoom; Home resets.
  const orbit = (dTheta, dPhi) => {
    const offset = camera.position.clone().sub(controls.target);
    const spherical = new THREE.Spherical().setFromVector3(offset);
    spherical.theta += dTheta;
    spherical.phi = THREE.MathUtils.clamp(spherical.phi + dPhi, 0.05, Math.PI - 0.05);
    camera.position.copy(controls.target).add(new THREE.Vector3().setFromSpherical(spherical));
    controls.update();
    render();
  };
  const zoom = (factor) => {
    const offset = camera.position.clone().sub(controls.target);
    const length = THREE.MathUtils.clamp(offset.length() * factor, controls.minDistance, controls.maxDistance);
    camera.position.copy(controls.target).add(offset.setLength(length));
    controls.update();
    render();
  };
  const keys = {
    ArrowLeft: () => orbit(-KEY_STEP, 0),
    ArrowRight: () => orbit(KEY_STEP, 0),
    ArrowUp: () => orbit(0, -KEY_STEP),
    ArrowDown: () => orbit(0, KEY_STEP),
    "+": () => zoom(0.85),
    "=": () => zoom(0.85),
    "-": () => zoom(1 / 0.85),
    Home: home,
  };
  canvas.addEventListener("keydown", (event) => {
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
  reset.onclick = home;
  reset.disabled = false;

  fit();
  home();
  element.dataset.state = "ready";
  status.textContent = t(countMeshes(model) === 1 ? "Showing {count} mesh." : "Showing {count} meshes.", { count: countMeshes(model) });
}

function countMeshes(root) {
  let count = 0;
  root.traverse((node) => { if (node.isMesh) count += 1; });
  return count;
}
