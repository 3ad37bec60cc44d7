"""The production loop's own logic: when triggers fire (``triggers``) and how failed results are
clustered into insights (``insights``). The server's firer, stores and routes for them live in
``assay.api``; these modules know nothing of HTTP."""
