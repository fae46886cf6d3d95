SELECT * FROM fleet.main.driver_month ORDER BY driver_id, month;
