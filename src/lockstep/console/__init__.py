"""The web console: plain HTML, CSS and JavaScript modules in `static/`, shipped inside the
package and served by api/routes/console.py. No build step and no third-party code; every
call it makes goes to lockstep's own API with the token the user signed in for."""
