-- List the first page (50) of workloads, newest first. Environment: TOKEN.
local token = os.getenv("TOKEN")
wrk.method = "GET"
wrk.path = "/api/v1/workloads?limit=50&sortBy=createdAt&sortOrder=desc"
wrk.headers["Authorization"] = "Bearer " .. token
